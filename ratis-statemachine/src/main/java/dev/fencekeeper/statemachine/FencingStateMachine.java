package dev.fencekeeper.statemachine;

import dev.fencekeeper.client.wire.LeaderRejection;
import dev.fencekeeper.config.Limits;
import dev.fencekeeper.config.Overload;
import dev.fencekeeper.config.Security;
import dev.fencekeeper.core.Command;
import dev.fencekeeper.core.FencingState;
import dev.fencekeeper.core.LeaseEvent;
import dev.fencekeeper.core.Outcome;
import dev.fencekeeper.core.ReplicaDivergedException;
import dev.fencekeeper.core.StateImage;
import dev.fencekeeper.metrics.StateMachineMetrics;
import dev.fencekeeper.proto.NodeInfo;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.statemachine.proto.AnsweredEarly;
import dev.fencekeeper.statemachine.proto.InternalRequest;
import dev.fencekeeper.statemachine.proto.LoggedCommand;
import dev.fencekeeper.statemachine.proto.Takeover;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.stream.Stream;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.InvalidProtocolBufferException;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.LifeCycle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Ratis adapter around {@link FencingState}: it decodes, stamps time, delegates and encodes,
 * and nothing else. Business outcomes — rejections included — are ordinary responses; nothing
 * thrown by business logic ever reaches Ratis, because an exception out of apply shuts the server
 * down.
 *
 * <p>Time: the leader stamps its clock into each entry in {@link #startTransaction}; apply reads
 * only that stamp. While it leads, that clock is monotonic from the takeover ({@link LeaderClock}).
 * Tokens: derived from the entry's log index inside the core.
 */
public class FencingStateMachine extends BaseStateMachine {
  private static final Logger LOG = LoggerFactory.getLogger(FencingStateMachine.class);

  private final Limits limits;
  private final LeaderClock leaderClock;
  private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
  private final SnapshotStore snapshots;
  private final SnapshotTaker snapshotTaker;
  private final java.util.concurrent.atomic.AtomicLong snapshotGeneration =
      new java.util.concurrent.atomic.AtomicLong();
  private volatile long noSnapshotInGeneration = -1;
  // Apply mutates under the write lock; queries and snapshots read under the read lock.
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private FencingState state;
  private volatile long nextExpiryMs = Long.MAX_VALUE;
  private final EventLog eventLog = new EventLog(EventLog.DEFAULT_CAPACITY);
  private final CompletableFuture<ReplicaDivergedException> diverged = new CompletableFuture<>();
  private BackupStore backups;
  private volatile ClientId internalClientId;
  private volatile LeaderDuties leaderDuties = LeaderDuties.NONE;
  private volatile StateMachineMetrics metrics = StateMachineMetrics.NONE;
  private volatile Security security = Security.none();
  private volatile Overload overload = Overload.defaults();
  private volatile PendingSlots pendingSlots = new PendingSlots(overload.maxPendingWrites());
  private volatile boolean fencingCheckSkipped;

  /**
   * A state machine that stamps entries with {@code wallClock} as it reads at each request: for
   * tests that drive stamps directly. Nodes use {@link #FencingStateMachine(Limits, LongSupplier,
   * LongSupplier)}.
   */
  public FencingStateMachine(Limits limits, LongSupplier wallClock) {
    this(limits, LeaderClock.wallOnly(wallClock));
  }

  /**
   * @param wallClock this node's wall clock (the clock-skew drill shifts and steps it)
   * @param monotonicNanos its monotonic clock ({@code System::nanoTime}); while this node leads,
   *     stamps are its wall clock at takeover advanced by this clock (see {@link LeaderClock});
   *     never read in apply
   */
  public FencingStateMachine(Limits limits, LongSupplier wallClock, LongSupplier monotonicNanos) {
    this(limits, new LeaderClock(wallClock, monotonicNanos));
  }

  private FencingStateMachine(Limits limits, LeaderClock leaderClock) {
    this.limits = limits;
    this.leaderClock = leaderClock;
    this.snapshots = new SnapshotStore(storage, limits);
    this.snapshotTaker =
        new SnapshotTaker(
            (image, applied) -> {
              snapshots.write(image, applied);
              snapshotGeneration.incrementAndGet();
            });
    this.state = new FencingState(limits);
  }

  /**
   * Requests from this client id may carry internal commands (takeover, tick); from others, never.
   */
  public void setInternalClientId(ClientId id) {
    this.internalClientId = id;
  }

  public void setLeaderDuties(LeaderDuties duties) {
    this.leaderDuties = duties;
  }

  /**
   * Who counts as an admin (revoke, backup); without TLS everyone does. Set before the server
   * starts.
   */
  public void setSecurity(Security security) {
    this.security = security;
  }

  /**
   * How many commands the leader holds and reads a node holds at once. Set before the server
   * starts.
   */
  public void setOverload(Overload overload) {
    this.overload = overload;
    this.pendingSlots = new PendingSlots(overload.maxPendingWrites());
  }

  /**
   * TEST ONLY, UNSAFE: every state this node holds, now and after loading a snapshot or seed,
   * accepts writes without the fencing check (see {@link FencingState#skipFencingCheckUnsafely}).
   * Set before the server starts.
   */
  public void skipFencingCheckUnsafely() {
    fencingCheckSkipped = true;
    state.skipFencingCheckUnsafely();
  }

  private FencingState adopted(FencingState s) {
    if (fencingCheckSkipped) {
      s.skipFencingCheckUnsafely();
    }
    return s;
  }

  /**
   * Observes requests, outcomes and lease events; never changes them. Set before the server starts.
   */
  public void setMetrics(StateMachineMetrics metrics) {
    this.metrics = metrics;
  }

  // -----------------------------------------------------------------------------------------------
  // Lifecycle. Ratis asserts PAUSED before installing a snapshot from the leader, so the LifeCycle
  // must
  // be driven here; BaseStateMachine leaves it at NEW and a follower would die on its first
  // install.

  @Override
  public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage)
      throws IOException {
    getLifeCycle()
        .startAndTransition(
            () -> {
              super.initialize(server, groupId, raftStorage);
              storage.init(raftStorage);
              if (RaftServerConfigKeys.Snapshot.autoTriggerEnabled(server.getProperties())) {
                snapshotTaker.autoTriggerEntries(
                    RaftServerConfigKeys.Snapshot.autoTriggerThreshold(server.getProperties()));
              }
              Path groupDir = raftStorage.getStorageDir().getRoot().toPath();
              removeAbandonedSnapshotDownloads(raftStorage.getStorageDir().getTmpDir().toPath());
              backups = new BackupStore(groupDir.resolve("backups"));
              if (!loadLatestSnapshot()) {
                startFromRestoreSeed(groupDir.getParent());
              }
            });
  }

  @Override
  public void pause() {
    lock.writeLock().lock();
    try {
      if (getLifeCycleState() == LifeCycle.State.RUNNING) {
        getLifeCycle().transition(LifeCycle.State.PAUSING);
        getLifeCycle().transition(LifeCycle.State.PAUSED);
      }
    } finally {
      lock.writeLock().unlock();
    }
  }

  @Override
  public void reinitialize() throws IOException {
    snapshotTaker.awaitWrite(); // it must not finish after the installed snapshot is loaded
    lock.writeLock().lock();
    try {
      storage.loadLatestSnapshot(); // getLatestSnapshot() is cached; rescan for the installed one
      snapshotGeneration.incrementAndGet();
      loadLatestSnapshot();
      if (getLifeCycleState() == LifeCycle.State.PAUSED) {
        getLifeCycle().transition(LifeCycle.State.STARTING);
        getLifeCycle().transition(LifeCycle.State.RUNNING);
      }
    } finally {
      lock.writeLock().unlock();
    }
  }

  /**
   * Ratis downloads a snapshot from the leader into {@code tmp/snapshot-<request id>} and moves it
   * into place only when complete; a node killed midway leaves the partial copy behind for good
   * (Ratis reuses a directory only for the same request id). At start no download of this process
   * can be running, so every such directory is abandoned: it is deleted, with a line saying how
   * much it held.
   */
  private static void removeAbandonedSnapshotDownloads(Path tmpDir) throws IOException {
    if (!Files.isDirectory(tmpDir)) {
      return;
    }
    List<Path> abandoned;
    try (Stream<Path> entries = Files.list(tmpDir)) {
      abandoned =
          entries
              .filter(
                  p -> Files.isDirectory(p) && p.getFileName().toString().startsWith("snapshot-"))
              .toList();
    }
    for (Path dir : abandoned) {
      long bytes = 0;
      List<Path> paths;
      try (Stream<Path> walk = Files.walk(dir)) {
        paths = walk.sorted(Comparator.reverseOrder()).toList();
      }
      for (Path p : paths) {
        if (Files.isRegularFile(p)) {
          bytes += Files.size(p);
        }
        Files.delete(p);
      }
      LOG.info(
          "Removed {} ({} bytes), a snapshot download that did not complete before this node"
              + " stopped",
          dir,
          bytes);
    }
  }

  /** Returns false when there is no snapshot to load. */
  private boolean loadLatestSnapshot() throws IOException {
    SnapshotStore.Loaded loaded = snapshots.loadLatest();
    if (loaded == null) {
      return false;
    }
    lock.writeLock().lock();
    try {
      state = adopted(loaded.state());
      eventLog.reset(loaded.termIndex().getIndex());
      publishNextExpiry();
      updateLastAppliedTermIndex(loaded.termIndex().getTerm(), loaded.termIndex().getIndex());
      snapshotTaker.onDisk(loaded.termIndex().getIndex());
    } finally {
      lock.writeLock().unlock();
    }
    LOG.info(
        "Loaded snapshot {} ({} resources)", loaded.termIndex(), loaded.state().resources().size());
    return true;
  }

  /**
   * A node of a cluster restored from a backup, with no snapshot of its own yet, starts from the
   * seed. Nothing is marked applied: the log, from its first entry, is applied on top of the seed
   * as on every other node of the new cluster.
   */
  private void startFromRestoreSeed(Path storageDir) throws IOException {
    FencingState seeded = RestoreSeed.load(storageDir, limits);
    if (seeded == null) {
      return;
    }
    lock.writeLock().lock();
    try {
      state = adopted(seeded);
      publishNextExpiry();
    } finally {
      lock.writeLock().unlock();
    }
    LOG.info(
        "Started from the restore seed in {} ({} resources; tokens continue above {})",
        storageDir,
        seeded.resources().size(),
        seeded.lastIssuedToken());
  }

  @Override
  public StateMachineStorage getStateMachineStorage() {
    return storage;
  }

  /**
   * As Ratis's, without listing the snapshot directory on every call while there is no snapshot
   * yet. {@link SimpleStateMachineStorage} caches a snapshot it found, but not having found one:
   * and Ratis asks on every append (the leader's appender loop, a follower's appendEntries), which
   * cost a young node 5-6 % of its CPU in directory listings under write load. "None" is remembered
   * until this node writes or installs a snapshot, which bumps the generation.
   */
  @Override
  public org.apache.ratis.statemachine.SnapshotInfo getLatestSnapshot() {
    long generation = snapshotGeneration.get();
    if (noSnapshotInGeneration == generation) {
      return null;
    }
    org.apache.ratis.statemachine.SnapshotInfo latest = storage.getLatestSnapshot();
    if (latest == null) {
      noSnapshotInGeneration =
          generation; // a snapshot written meanwhile has bumped it: asked again then
    }
    return latest;
  }

  /**
   * Takes an image of the state under the read lock and writes it outside, in the background when
   * Ratis triggered the snapshot itself (see {@link SnapshotTaker}); returns the newest index on
   * disk.
   */
  @Override
  public long takeSnapshot() throws IOException {
    TermIndex applied = getLastAppliedTermIndex();
    if (applied == null || applied.getIndex() < 0) {
      return RaftLog.INVALID_LOG_INDEX;
    }
    return snapshotTaker.take(applied, this::image);
  }

  /**
   * The state as an immutable image, with the entry it reflects, taken under the read lock: cheap,
   * and safe to write later.
   */
  private SnapshotTaker.Image image() {
    lock.readLock().lock();
    try {
      return new SnapshotTaker.Image(getLastAppliedTermIndex(), state.image());
    } finally {
      lock.readLock().unlock();
    }
  }

  // -----------------------------------------------------------------------------------------------
  // Leader side: validate, refuse what can be refused without a log entry, stamp time.

  @Override
  public TransactionContext startTransaction(RaftClientRequest request) {
    Object timing = metrics.requestStarted();
    PendingSlot slot = null;
    try {
      Stamped stamped = stamped(request);
      LoggedCommand logged = stamped.logged();
      if (stamped.clientCommands() > 0) {
        PendingSlots slots = pendingSlots;
        slot = slots.tryTake(stamped.clientCommands());
        if (slot == null) {
          throw overloaded(slots.overloaded(), stamped);
        }
      }
      return TransactionContext.newBuilder()
          .setStateMachine(this)
          .setClientRequest(request)
          .setLogData(UnsafeByteOperations.unsafeWrap(logged.toByteArray()))
          .setStateMachineContext(new Started(timing, slot)) // leader-local, never replicated
          .build();
    } catch (EarlyAnswer answer) {
      if (slot != null) {
        slot.release();
      }
      for (WireCodec.Refusal refusal : answer.uncounted) {
        metrics.refusedEarly(refusal.command(), refusal.response());
      }
      // Refused without a log entry. The exception must ride on the context, not be thrown: a
      // thrown
      // one leaves the request pending in Ratis's retry cache and the client's retry hangs on it.
      TransactionContext refused =
          TransactionContext.newBuilder().setStateMachine(this).setClientRequest(request).build();
      refused.setException(new IOException(LeaderRejection.encode(answer.response)));
      return refused;
    }
  }

  /**
   * A log entry ready to append; the client commands it carries ({@code command}: one, or a batch
   * of them, {@code clientCommands} in all); and the answers to the commands of the client's batch
   * that were refused instead of logged, by position (see {@link #stamped}).
   */
  private record Stamped(
      LoggedCommand logged,
      Command command,
      int clientCommands,
      SortedMap<Integer, Response> answeredEarly) {}

  /**
   * When the leader already holds as many unapplied commands as it may: the commands that would
   * have been logged are answered OVERLOADED; commands of the batch refused before that keep their
   * refusal, as they would have alone.
   */
  private static EarlyAnswer overloaded(Response overloaded, Stamped stamped) {
    if (stamped.answeredEarly().isEmpty()) {
      return new EarlyAnswer(overloaded, stamped.command());
    }
    Response merged =
        WireCodec.mergeBatchAnswers(
            stamped.answeredEarly(), Collections.nCopies(stamped.clientCommands(), overloaded));
    return new EarlyAnswer(merged, List.of(new WireCodec.Refusal(stamped.command(), overloaded)));
  }

  private Stamped stamped(RaftClientRequest request) {
    ByteString content = request.getMessage().getContent();
    LoggedCommand.Builder logged = LoggedCommand.newBuilder();
    Command clientCommand = null;
    SortedMap<Integer, Response> answeredEarly = Collections.emptySortedMap();
    if (internalClientId != null && internalClientId.equals(request.getClientId())) {
      InternalRequest internal = parseInternal(content);
      switch (internal.getBodyCase()) {
        // Stamped with this leader's lineage here, as the time is: the proposer need not know it.
        case TAKEOVER ->
            logged.setTakeover(Takeover.newBuilder().setLineage(read(FencingState::lineage)));
        case TICK -> logged.setTick(internal.getTick());
        default -> throw new EarlyAnswer(WireCodec.invalid("empty internal request"));
      }
    } else {
      Request parsed = parseRequest(content);
      Command command = WireCodec.toCommand(parsed);
      if (command == null) {
        throw new EarlyAnswer(WireCodec.invalid(WireCodec.whyNoCommand(parsed)));
      }
      clientCommand = command;
      if (command instanceof Command.Revoke && !security.isAdmin(parsed.getCaller())) {
        throw new EarlyAnswer(permissionDenied("revoke", parsed.getCaller()), command);
      }
      Outcome refusal = refuseEarly(command);
      if (refusal != null) {
        throw new EarlyAnswer(WireCodec.toResponse(refusal), command);
      }
      // The client's bytes go into the entry as they are: apply decodes exactly what the client
      // sent
      // (for a batch with refused commands: the client's other requests, as the client sent them).
      ByteString clientRequest = content;
      if (command instanceof Command.Batch batch) {
        // Each command of a batch the leader would refuse alone is refused here too, by the same
        // rule,
        // with the same answer; only the others are logged. Each refusal is counted here, once,
        // whatever
        // becomes of the others.
        WireCodec.SplitBatch split =
            read(s -> WireCodec.splitBatch(parsed, batch, s::refusalBeforeLog));
        split.refused().values().forEach(r -> metrics.refusedEarly(r.command(), r.response()));
        if (split.toLog() == null) {
          throw new EarlyAnswer(WireCodec.mergeBatchAnswers(split.answers(), List.of()), List.of());
        }
        if (!split.refused().isEmpty()) {
          clientCommand = split.logged();
          clientRequest = split.toLog().toByteString();
          answeredEarly = split.answers();
          answeredEarly.forEach(
              (position, answer) ->
                  logged.addAnsweredEarly(
                      AnsweredEarly.newBuilder()
                          .setPosition(position)
                          .setResponse(answer.toByteString())));
        }
      }
      logged.setClientRequest(clientRequest);
    }
    int clientCommands =
        clientCommand == null
            ? 0
            : clientCommand instanceof Command.Batch b ? b.commands().size() : 1;
    return new Stamped(
        logged.setStampMs(leaderClock.nowMs()).build(),
        clientCommand,
        clientCommands,
        answeredEarly);
  }

  /**
   * A request answered on the leader without a log entry, with the refusals the metrics have yet to
   * see.
   */
  private static final class EarlyAnswer extends RuntimeException {
    private final transient Response response;
    private final transient List<WireCodec.Refusal> uncounted;

    /** A request that did not decode into a command. */
    EarlyAnswer(Response response) {
      this(response, (Command) null);
    }

    EarlyAnswer(Response response, Command command) {
      this(response, List.of(new WireCodec.Refusal(command, response)));
    }

    EarlyAnswer(Response response, List<WireCodec.Refusal> uncounted) {
      super(response.getMessage(), null, false, false);
      this.response = response;
      this.uncounted = uncounted;
    }
  }

  /**
   * Malformed commands and writes with an already-superseded token are answered on the leader,
   * without a log entry, by {@link FencingState#refusalBeforeLog} (why that is safe is said there):
   * alone, or inside a batch, command by command. Everything else must go through the log.
   */
  private Outcome refuseEarly(Command command) {
    return read(s -> s.refusalBeforeLog(command));
  }

  private static Response permissionDenied(String operation, String caller) {
    return Response.newBuilder()
        .setCode(dev.fencekeeper.proto.ResultCode.PERMISSION_DENIED)
        .setMessage(
            "identity '" + caller + "' may not " + operation + ": it is not in authz.admins")
        .build();
  }

  private static Request parseRequest(ByteString content) {
    try {
      return Request.parseFrom(content.asReadOnlyByteBuffer());
    } catch (InvalidProtocolBufferException e) {
      throw new EarlyAnswer(WireCodec.invalid("malformed request: " + e.getMessage()));
    }
  }

  private static InternalRequest parseInternal(ByteString content) {
    try {
      return InternalRequest.parseFrom(content.asReadOnlyByteBuffer());
    } catch (InvalidProtocolBufferException e) {
      throw new EarlyAnswer(WireCodec.invalid("malformed internal request: " + e.getMessage()));
    }
  }

  // -----------------------------------------------------------------------------------------------
  // Every replica: apply committed entries in log order.

  @Override
  public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
    LogEntryProto entry = trx.getLogEntry();
    Response response;
    lock.writeLock().lock();
    try {
      Object context = trx.getStateMachineContext();
      Started started = context instanceof Started s ? s : null;
      if (started != null) {
        started.releaseSlot();
      }
      response = applyEntry(entry, started == null ? null : started.timing());
      List<LeaseEvent> events = state.drainEvents();
      metrics.leaseEvents(events);
      eventLog.append(entry.getIndex(), events);
      updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
      publishNextExpiry();
    } finally {
      lock.writeLock().unlock();
    }
    return CompletableFuture.completedFuture(toMessage(response));
  }

  private Response applyEntry(LogEntryProto entry, Object requestContext) {
    try {
      LoggedCommand logged =
          LoggedCommand.parseFrom(
              entry.getStateMachineLogEntry().getLogData().asReadOnlyByteBuffer());
      Command command;
      switch (logged.getBodyCase()) {
        case TAKEOVER ->
            command =
                logged.getTakeover().hasLineage()
                    ? Command.Takeover.from(logged.getTakeover().getLineage())
                    : new Command.Takeover();
        case TICK -> command = new Command.Tick();
        case CLIENT_REQUEST -> {
          Request request = Request.parseFrom(logged.getClientRequest());
          command = WireCodec.toCommand(request);
          if (command == null) {
            return WireCodec.invalid(WireCodec.whyNoCommand(request));
          }
        }
        default -> {
          return WireCodec.invalid("empty log entry");
        }
      }
      SortedMap<Integer, Response> answeredEarly = answeredEarly(logged, command);
      if (answeredEarly == null) {
        return WireCodec.invalid(
            "malformed log entry "
                + entry.getIndex()
                + ": its early answers do not fit the batch it carries");
      }
      if (command instanceof Command.Batch batch) {
        metrics.batchApplied(batch.commands().size());
        Response applied =
            WireCodec.toBatchResponse(
                state.applyBatch(
                    batch,
                    entry.getTerm(),
                    entry.getIndex(),
                    logged.getStampMs(),
                    (each, run) -> metrics.apply(each, state, requestContext, run)));
        // Every replica answers the client's whole batch, so a retry after a failover, answered
        // from the
        // new leader's retry cache, gets what the old leader would have answered.
        return answeredEarly.isEmpty()
            ? applied
            : WireCodec.mergeBatchAnswers(answeredEarly, applied.getBatchList());
      }
      return WireCodec.toResponse(
          metrics.apply(
              command,
              state,
              requestContext,
              () -> state.apply(command, entry.getTerm(), entry.getIndex(), logged.getStampMs())));
    } catch (InvalidProtocolBufferException e) {
      // Every replica decodes the same bytes the same way, so this answer is deterministic too.
      return WireCodec.invalid("malformed log entry " + entry.getIndex() + ": " + e.getMessage());
    } catch (ReplicaDivergedException e) {
      // Thrown on: Ratis stops a server whose apply throws, and stopping is the point.
      LOG.error("Stopping this replica: {}", e.getMessage());
      diverged.complete(e);
      throw e;
    } catch (RuntimeException e) {
      LOG.error("Bug: applying entry {} threw; answering INTERNAL", entry.getIndex(), e);
      return WireCodec.internal("entry " + entry.getIndex() + " failed: " + e);
    }
  }

  /**
   * The answers the leader gave commands of the client's batch instead of logging them, by position
   * in that batch; empty for most entries; null when they cannot belong to {@code command} (only a
   * batch has them, and each must take a distinct position within the batch they and its logged
   * commands make up). Checked before anything is applied: a malformed entry changes nothing.
   */
  private static SortedMap<Integer, Response> answeredEarly(LoggedCommand logged, Command command)
      throws InvalidProtocolBufferException {
    SortedMap<Integer, Response> answers = new TreeMap<>();
    for (AnsweredEarly answered : logged.getAnsweredEarlyList()) {
      if (answers.put(answered.getPosition(), Response.parseFrom(answered.getResponse())) != null) {
        return null;
      }
    }
    if (answers.isEmpty()) {
      return answers;
    }
    if (!(command instanceof Command.Batch batch)) {
      return null;
    }
    boolean fits =
        answers.firstKey() >= 0 && answers.lastKey() < answers.size() + batch.commands().size();
    return fits ? answers : null;
  }

  /**
   * Completes when this replica found that its state is not the one its log was written against and
   * stopped applying (Ratis then closes the server): the node process should exit.
   */
  public CompletableFuture<ReplicaDivergedException> diverged() {
    return diverged;
  }

  private void publishNextExpiry() {
    nextExpiryMs = state.nextWakeupMs();
  }

  /** The earliest deadline of a lease live in the applied state; Long.MAX_VALUE when none. */
  public long nextExpiryMs() {
    return nextExpiryMs;
  }

  // -----------------------------------------------------------------------------------------------
  // Reads: linearizable through Ratis's read index, or stale from whichever node is asked.

  @Override
  public CompletableFuture<Message> query(Message request) {
    Response response;
    try {
      Request parsed = Request.parseFrom(request.getContent().asReadOnlyByteBuffer());
      if (parsed.getReadOverloaded()) {
        return CompletableFuture.completedFuture(toMessage(readOverloaded()));
      }
      if (parsed.getCommandCase() == Request.CommandCase.WATCH) {
        return eventLog
            .watch(parsed.getWatch(), parsed.getCaller(), limits.maxWatchesPerClient())
            .thenApply(FencingStateMachine::toMessage);
      }
      if (parsed.getCommandCase() == Request.CommandCase.BACKUP
          && !security.isAdmin(parsed.getCaller())) {
        Response denied = permissionDenied("backup", parsed.getCaller());
        metrics.denied("backup", parsed.getCaller(), denied.getMessage());
        return CompletableFuture.completedFuture(toMessage(denied));
      }
      if (parsed.getCommandCase() == Request.CommandCase.BACKUP) {
        return CompletableFuture.completedFuture(
            toMessage(backups.serve(parsed.getBackup(), this::writeFrozen)));
      }
      response = answer(parsed);
    } catch (InvalidProtocolBufferException e) {
      response = WireCodec.invalid("malformed request: " + e.getMessage());
    } catch (RuntimeException e) {
      LOG.error("Bug: query threw", e);
      response = WireCodec.internal("query failed: " + e);
    }
    return CompletableFuture.completedFuture(toMessage(response));
  }

  private static Message toMessage(Response response) {
    return Message.valueOf(UnsafeByteOperations.unsafeWrap(response.toByteArray()));
  }

  /**
   * The answer to a read the node refused on arrival (server.CallerGate marks it) because it
   * already held overload.pending-reads.max reads: nothing was read, and the caller may simply
   * retry later.
   */
  private Response readOverloaded() {
    return Response.newBuilder()
        .setCode(ResultCode.OVERLOADED)
        .setMessage(
            "this node already holds "
                + overload.maxPendingReads()
                + " reads in flight"
                + " (overload.pending-reads.max); nothing was read, retry later")
        .build();
  }

  /**
   * Stale reads need no waiting: the caller asked for whatever this replica has applied. They carry
   * the caller the node stamped, like every read.
   */
  @Override
  public CompletableFuture<Message> queryStale(Message request, long minIndex) {
    return query(request);
  }

  private Response answer(Request request) {
    if (request.getCommandCase() == Request.CommandCase.NODE_INFO) {
      return Response.newBuilder().setNode(nodeInfo()).build();
    }
    lock.readLock().lock();
    try {
      return switch (request.getCommandCase()) {
        case READ ->
            WireCodec.toResponse(
                state.read(request.getRead().getResource(), request.getRead().getKey()));
        case LEASE -> WireCodec.toResponse(state.lease(request.getLease().getResource()));
        case VALIDATE ->
            WireCodec.toResponse(
                state.validateToken(
                    request.getValidate().getResource(), request.getValidate().getToken()));
        case LIST -> WireCodec.listing(state, request.getList());
        default -> WireCodec.invalid("commands must be sent as writes, not reads");
      };
    } finally {
      lock.readLock().unlock();
    }
  }

  private NodeInfo nodeInfo() {
    NodeInfo.Builder b =
        NodeInfo.newBuilder()
            .setPid(ProcessHandle.current().pid())
            .setMetricsPort(Math.max(0, metrics.httpPort()))
            .setLimits(
                dev.fencekeeper.proto.ServerLimits.newBuilder()
                    .setMaxResourceBytes(limits.maxResourceBytes())
                    .setMaxKeyBytes(limits.maxKeyBytes())
                    .setMaxOwnerBytes(limits.maxOwnerBytes())
                    .setMaxValueBytes(limits.maxValueBytes())
                    .setMaxRequestsPerBatch(limits.maxRequestsPerBatch())
                    .setMinTtlMs(limits.minTtl().toMillis())
                    .setMaxTtlMs(limits.maxTtl().toMillis()));
    org.apache.ratis.statemachine.SnapshotInfo snapshot = getLatestSnapshot();
    b.setSnapshotIndex(snapshot == null ? RaftLog.INVALID_LOG_INDEX : snapshot.getIndex());
    try {
      RaftServer server = getServer().getNow(null);
      if (server != null) {
        RaftServer.Division division = server.getDivision(getGroupId());
        RaftPeerId leader = division.getInfo().getLeaderId();
        b.setId(server.getId().toString())
            .setAddress(server.getPeer().getAddress())
            .setRole(division.getInfo().getCurrentRole().name())
            .setTerm(division.getInfo().getCurrentTerm())
            .setLastAppliedIndex(division.getInfo().getLastAppliedIndex())
            .setCommitIndex(division.getRaftLog().getLastCommittedIndex())
            .setLeaderId(leader == null ? "" : leader.toString());
        // Ratis's segments: closed log_<first>-<last> and open log_inprogress_<first>
        // (preallocated) files.
        java.io.File[] segments =
            division
                .getRaftStorage()
                .getStorageDir()
                .getCurrentDir()
                .listFiles((dir, name) -> name.startsWith("log_"));
        long logBytes = 0;
        for (java.io.File segment : segments == null ? new java.io.File[0] : segments) {
          logBytes += segment.length();
        }
        b.setLogSizeBytes(logBytes);
      }
    } catch (IOException e) {
      b.setRole("UNKNOWN");
    }
    return b.build();
  }

  // -----------------------------------------------------------------------------------------------
  // Leader duties run outside the log; they only ever propose commands through it.

  @Override
  public void notifyLeaderChanged(RaftGroupMemberId groupMemberId, RaftPeerId newLeaderId) {
    metrics.leaderChanged(newLeaderId);
  }

  @Override
  public void notifyLeaderReady() {
    leaderClock.anchor(read(FencingState::nowMs));
    leaderDuties.onLeaderReady();
  }

  /**
   * The time this node stamps entries with while it leads (see {@link LeaderClock}): what its
   * expiry ticker compares deadlines with.
   */
  public long leaderTimeMs() {
    return leaderClock.nowMs();
  }

  @Override
  public void notifyNotLeader(Collection<TransactionContext> pendingEntries) {
    leaderClock.release();
    leaderDuties.onNotLeader();
    // No longer this node's to answer: whatever becomes of them, they no longer wait in its queue.
    for (TransactionContext trx : pendingEntries) {
      if (trx.getStateMachineContext() instanceof Started s) {
        s.releaseSlot();
      }
    }
  }

  /**
   * Ratis gave up on a started transaction before logging it (e.g. it lost leadership meanwhile).
   */
  @Override
  public TransactionContext cancelTransaction(TransactionContext trx) throws IOException {
    if (trx.getStateMachineContext() instanceof Started s) {
      s.releaseSlot();
    }
    return super.cancelTransaction(trx);
  }

  /** The number of client commands this node accepted as leader and has not yet applied. */
  public int pendingCommands() {
    return pendingSlots.inUse();
  }

  /**
   * A started transaction's leader-local context: the metrics' timing and its place in the queue.
   */
  private record Started(Object timing, PendingSlot slot) {
    void releaseSlot() {
      if (slot != null) {
        slot.release();
      }
    }
  }

  @Override
  public void close() throws IOException {
    leaderDuties.onNotLeader();
    eventLog.close();
    snapshotTaker.close();
    super.close();
  }

  /**
   * SHA-256 of the applied state in snapshot form, with the index it reflects: equal digests at
   * equal indexes mean identical replicas.
   */
  public StateDigest digest() {
    SnapshotTaker.Image image = image();
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      try (OutputStream out = new DigestOutputStream(OutputStream.nullOutputStream(), sha)) {
        SnapshotStore.writeTo(image.state(), out);
      }
      return new StateDigest(image.applied().getIndex(), HexFormat.of().formatHex(sha.digest()));
    } catch (IOException | NoSuchAlgorithmException e) {
      throw new IllegalStateException("cannot digest the state", e);
    }
  }

  private BackupStore.Frozen writeFrozen(OutputStream out) {
    StateImage image = image().state();
    try {
      SnapshotStore.writeTo(image, out);
      return new BackupStore.Frozen(image.lastIssuedToken(), image.resources().size());
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** A replica's state fingerprint at an applied index. */
  public record StateDigest(long appliedIndex, String sha256) {}

  /** For tests and snapshots: run {@code reader} against a consistent view of the state. */
  public <T> T read(Function<FencingState, T> reader) {
    lock.readLock().lock();
    try {
      return reader.apply(state);
    } finally {
      lock.readLock().unlock();
    }
  }

  /** What a node does when it becomes leader or stops being one; only ever proposes log entries. */
  public interface LeaderDuties {
    LeaderDuties NONE =
        new LeaderDuties() {
          @Override
          public void onLeaderReady() {}

          @Override
          public void onNotLeader() {}
        };

    void onLeaderReady();

    void onNotLeader();
  }
}
