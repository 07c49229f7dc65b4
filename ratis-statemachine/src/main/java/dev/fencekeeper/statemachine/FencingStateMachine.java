package dev.fencekeeper.statemachine;

import dev.fencekeeper.config.Limits;
import dev.fencekeeper.config.Overload;
import dev.fencekeeper.config.Security;
import dev.fencekeeper.core.FencingState;
import dev.fencekeeper.core.ReplicaDivergedException;
import dev.fencekeeper.metrics.StateMachineMetrics;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftConfigurationProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.LifeCycle;

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
  /** Why a linearizable read was answered NOT_LEADER: its read barrier did not commit here. */
  public static final String READ_NOT_CONFIRMED =
      "could not confirm leadership for a linearizable read: this node could not commit a barrier"
          + " entry";

  private final LeaderClock leaderClock;
  private final ReplicaSnapshots snapshots;
  // Apply mutates under the write lock; queries and snapshots read under the read lock.
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private FencingState state;
  private volatile long nextExpiryMs = Long.MAX_VALUE;
  private final EventLog eventLog = new EventLog(EventLog.DEFAULT_CAPACITY);
  private final CompletableFuture<ReplicaDivergedException> diverged = new CompletableFuture<>();
  private volatile LeaderDuties leaderDuties = LeaderDuties.NONE;
  private volatile RaftEvents raftEvents = RaftEvents.NONE;
  private volatile PendingSlots pendingSlots =
      new PendingSlots(Overload.DEFAULT_MAX_PENDING_WRITES);
  private final Admission admission;
  private final EntryApplier applier = new EntryApplier(diverged, eventLog);
  private final QueryService queries;
  private volatile StateMachineMetrics metrics = StateMachineMetrics.NONE;

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
   *     stamps continue the replicated time line from the takeover by this clock (see {@link
   *     LeaderClock}); never read in apply
   */
  public FencingStateMachine(Limits limits, LongSupplier wallClock, LongSupplier monotonicNanos) {
    this(limits, new LeaderClock(wallClock, monotonicNanos));
  }

  private FencingStateMachine(Limits limits, LeaderClock leaderClock) {
    this.leaderClock = leaderClock;
    this.snapshots = new ReplicaSnapshots(limits, this::adopt);
    this.state = new FencingState(limits);
    this.admission = new Admission(leaderClock, this::read);
    this.queries =
        new QueryService(
            limits,
            this::read,
            eventLog,
            this::division,
            snapshots::latestIndex,
            this::writeFrozen);
  }

  /**
   * Requests from this client id are this node's own entries: takeovers, expiry ticks and read
   * barriers. Set before start.
   */
  public void setInternalClientId(ClientId id) {
    admission.setInternalClientId(id);
  }

  /**
   * Requests from this client id are the client port's commands (see {@code
   * Admission.setClientPortId}); requests from any other client id but the internal one are
   * refused. Set before start.
   */
  public void setClientPortId(ClientId id) {
    admission.setClientPortId(id);
  }

  /**
   * This node's client address: announced in its takeover entries and reported by {@code
   * NodeStatus}. Set before start.
   */
  public void setClientAddress(String address) {
    admission.setClientAddress(address);
    queries.setClientAddress(address);
  }

  /** This node's cluster id, reported by {@code NodeStatus}; empty while it knows none. */
  public void setClusterId(Supplier<String> id) {
    queries.setClusterId(id);
  }

  /**
   * The leader's bound on pending commands (overload.pending-writes.max), which its client port
   * takes and gives back.
   */
  public PendingSlots pendingSlots() {
    return pendingSlots;
  }

  /**
   * The answer to a query ({@code RequestKinds.isQuery}) whose caller the node stamped, from the
   * state this replica has applied, under the read lock; watches long-poll. Never fails. A
   * linearizable read calls it once its read barrier has been applied here.
   */
  public CompletableFuture<Response> answerQuery(Request request) {
    return queries.query(request);
  }

  /** The lease events this replica applies, for streams. */
  public EventFeed events() {
    return eventLog;
  }

  /** What the newest takeover entry applied here said about its leader's client address. */
  public LeaderAnnouncement leaderAnnouncement() {
    return applier.announced();
  }

  public void setLeaderDuties(LeaderDuties duties) {
    this.leaderDuties = duties;
  }

  /** Who hears of a change of leader or of members on this replica. */
  public void setRaftEvents(RaftEvents events) {
    this.raftEvents = events;
  }

  /** Who counts as an admin (revoke, backup); without TLS everyone does. Set before start. */
  public void setSecurity(Security security) {
    queries.setSecurity(security);
  }

  /** How many commands the leader and reads a node hold at once. Set before start. */
  public void setOverload(Overload overload) {
    this.pendingSlots = new PendingSlots(overload.maxPendingWrites());
    queries.setOverload(overload);
  }

  /** Takes over a state loaded from a snapshot ({@code applied}) or a restore seed (null). */
  private void adopt(FencingState loaded, TermIndex applied) {
    lock.writeLock().lock();
    try {
      state = loaded;
      if (applied != null) {
        eventLog.reset(applied.getIndex());
        updateLastAppliedTermIndex(applied.getTerm(), applied.getIndex());
      }
      publishNextExpiry();
    } finally {
      lock.writeLock().unlock();
    }
  }

  /** Observes requests, outcomes and lease events; never changes them. Set before start. */
  public void setMetrics(StateMachineMetrics metrics) {
    this.metrics = metrics;
    admission.setMetrics(metrics);
    applier.setMetrics(metrics);
    queries.setMetrics(metrics);
  }

  // -----------------------------------------------------------------------------------------------
  // Lifecycle. Ratis asserts PAUSED before installing a snapshot from the leader, so the LifeCycle
  // must be driven here; BaseStateMachine leaves it at NEW and a follower would die on its first
  // install.

  @Override
  public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage)
      throws IOException {
    getLifeCycle()
        .startAndTransition(
            () -> {
              super.initialize(server, groupId, raftStorage);
              Path groupDir = raftStorage.getStorageDir().getRoot().toPath();
              queries.setBackups(new BackupStore(groupDir.resolve("backups")));
              snapshots.start(raftStorage, server.getProperties());
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
    snapshots.awaitWrite(); // it must not finish after the installed snapshot is loaded
    lock.writeLock().lock();
    try {
      snapshots.reloadInstalled();
      if (getLifeCycleState() == LifeCycle.State.PAUSED) {
        getLifeCycle().transition(LifeCycle.State.STARTING);
        getLifeCycle().transition(LifeCycle.State.RUNNING);
      }
    } finally {
      lock.writeLock().unlock();
    }
  }

  @Override
  public StateMachineStorage getStateMachineStorage() {
    return snapshots.storage();
  }

  /**
   * As Ratis's, without listing the directory while there is no snapshot ({@link LatestSnapshot}).
   */
  @Override
  public org.apache.ratis.statemachine.SnapshotInfo getLatestSnapshot() {
    return snapshots.latest();
  }

  /**
   * Takes an image of the state under the read lock and writes it outside, in the background when
   * Ratis triggered the snapshot itself (see {@link SnapshotTaker}); returns the newest index on
   * disk.
   */
  @Override
  public long takeSnapshot() throws IOException {
    return snapshots.take(getLastAppliedTermIndex(), this::image);
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
  // Leader side: log what this node's client port and its own duties propose, stamped with the
  // leader's time; refuse anything else.

  @Override
  public TransactionContext startTransaction(RaftClientRequest request) {
    Admission.Decision decision = admission.admit(request);
    TransactionContext.Builder trx =
        TransactionContext.newBuilder().setStateMachine(this).setClientRequest(request);
    if (decision instanceof Admission.ToLog toLog) {
      return trx.setLogData(UnsafeByteOperations.unsafeWrap(toLog.entry().toByteArray()))
          .setStateMachineContext(toLog.context()) // leader-local, never replicated
          .build();
    }
    // Refused without a log entry. The exception must ride on the context, not be thrown: a thrown
    // one leaves the request pending in Ratis's retry cache.
    Admission.Answered answered = (Admission.Answered) decision;
    TransactionContext refused = trx.setStateMachineContext(answered).build();
    refused.setException(answered.asException());
    return refused;
  }

  // -----------------------------------------------------------------------------------------------
  // Every replica: apply committed entries in log order.

  @Override
  public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
    LogEntryProto entry = trx.getLogEntry();
    Response response;
    lock.writeLock().lock();
    try {
      Object timing = Admission.Started.timingOf(trx.getStateMachineContext());
      response = applier.apply(state, entry, timing);
      leaderClock.applied(state.nowMs());
      updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
      publishNextExpiry();
    } finally {
      lock.writeLock().unlock();
    }
    return CompletableFuture.completedFuture(toMessage(response));
  }

  /**
   * Completes when this replica found that its state is not the one its log was written against and
   * stopped applying (Ratis then closes the server): the node process should exit.
   */
  public CompletableFuture<ReplicaDivergedException> diverged() {
    return diverged;
  }

  /**
   * Publishes the state's earliest deadline for the leader's expiry ticker, and wakes the ticker
   * when it moved earlier: the ticker sleeps until the deadline it last saw.
   */
  private void publishNextExpiry() {
    long previous = nextExpiryMs;
    long next = state.nextWakeupMs();
    nextExpiryMs = next;
    if (next < previous) {
      leaderDuties.deadlineMovedEarlier(next);
    }
  }

  /** The earliest deadline of a lease live in the applied state; Long.MAX_VALUE when none. */
  public long nextExpiryMs() {
    return nextExpiryMs;
  }

  // -----------------------------------------------------------------------------------------------
  // Reads enter through the client port ({@link #answerQuery}); the Raft port refuses Ratis's
  // client
  // service, so Ratis's query and queryStale are never called with a read of fencekeeper's and keep
  // BaseStateMachine's behaviour.

  private static Message toMessage(Response response) {
    return Message.valueOf(UnsafeByteOperations.unsafeWrap(response.toByteArray()));
  }

  /** The division this node runs, or null before its server started. */
  private RaftServer.Division division() throws IOException {
    RaftServer server = getServer().getNow(null);
    return server == null ? null : server.getDivision(getGroupId());
  }

  // -----------------------------------------------------------------------------------------------
  // Leader duties run outside the log; they only ever propose commands through it.

  @Override
  public void notifyLeaderChanged(RaftGroupMemberId groupMemberId, RaftPeerId newLeaderId) {
    metrics.leaderChanged(newLeaderId);
    raftEvents.leaderChanged();
  }

  @Override
  public void notifyConfigurationChanged(
      long term, long index, RaftConfigurationProto newRaftConfiguration) {
    raftEvents.configurationChanged();
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

  /**
   * How far this node's wall clock is ahead of the replicated time line, in milliseconds (negative:
   * behind); null before this node led or applied anything. See {@link LeaderClock#wallAheadMs}.
   */
  public Long wallAheadOfTimeLineMs() {
    return leaderClock.wallAheadMs();
  }

  @Override
  public void notifyNotLeader(Collection<TransactionContext> pendingEntries) {
    leaderClock.release();
    leaderDuties.onNotLeader();
  }

  /**
   * The number of client commands this node's client port holds as leader: queued, in flight or not
   * yet answered.
   */
  public int pendingCommands() {
    return pendingSlots.inUse();
  }

  @Override
  public void close() throws IOException {
    leaderDuties.onNotLeader();
    eventLog.close();
    snapshots.close();
    super.close();
  }

  /**
   * SHA-256 of the applied state in snapshot form, with the index it reflects: equal digests at
   * equal indexes mean identical replicas.
   */
  public StateDigest digest() {
    SnapshotTaker.Image image = image();
    return new StateDigest(image.applied().getIndex(), SnapshotStore.sha256(image.state()));
  }

  private BackupStore.Frozen writeFrozen(OutputStream out) {
    return SnapshotStore.freeze(image().state(), out);
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
}
