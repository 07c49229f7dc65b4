package dev.fencekeeper.statemachine;

import dev.fencekeeper.core.Command;
import dev.fencekeeper.core.FencingState;
import dev.fencekeeper.core.LeaseEvent;
import dev.fencekeeper.core.Outcome;
import dev.fencekeeper.core.ReplicaDivergedException;
import dev.fencekeeper.metrics.StateMachineMetrics;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.statemachine.proto.LoggedCommand;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.thirdparty.com.google.protobuf.InvalidProtocolBufferException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies one committed log entry on every replica: decodes it ({@link WireCodec#decode}), hands
 * its command to the core at the entry's index, term and stamp, shows the metrics each outcome,
 * passes the lease events it caused to the {@link EventLog} and the metrics, and encodes the
 * answer. Nothing thrown by the core reaches Ratis but a diverged lineage, which must stop the
 * replica.
 */
final class EntryApplier {
  private static final Logger LOG = LoggerFactory.getLogger(EntryApplier.class);

  private final CompletableFuture<ReplicaDivergedException> diverged;
  private final EventLog eventLog;
  private volatile StateMachineMetrics metrics = StateMachineMetrics.NONE;
  private volatile LeaderAnnouncement announced = LeaderAnnouncement.NONE;

  /**
   * {@code diverged} completes when an entry shows that this replica's state diverged; {@code
   * eventLog} receives the lease events of every entry applied.
   */
  EntryApplier(CompletableFuture<ReplicaDivergedException> diverged, EventLog eventLog) {
    this.diverged = diverged;
    this.eventLog = eventLog;
  }

  void setMetrics(StateMachineMetrics metrics) {
    this.metrics = metrics;
  }

  /** The client address the newest takeover entry applied here announced, with its term. */
  LeaderAnnouncement announced() {
    return announced;
  }

  /**
   * The answer to {@code entry}, applied to {@code state}; the caller holds the write lock. {@code
   * requestContext} is the metrics' timing when this node stamped the entry as leader, else null.
   */
  Response apply(FencingState state, LogEntryProto entry, Object requestContext) {
    Response response = answer(state, entry, requestContext);
    List<LeaseEvent> events = state.drainEvents();
    metrics.leaseEvents(events);
    eventLog.append(entry.getIndex(), events);
    return response;
  }

  private Response answer(FencingState state, LogEntryProto entry, Object requestContext) {
    try {
      LoggedCommand logged =
          LoggedCommand.parseFrom(
              entry.getStateMachineLogEntry().getLogData().asReadOnlyByteBuffer());
      if (logged.hasTakeover() && !logged.getTakeover().getClientAddress().isEmpty()) {
        announced =
            new LeaderAnnouncement(entry.getTerm(), logged.getTakeover().getClientAddress());
      }
      WireCodec.Entry decoded = WireCodec.decode(logged);
      if (decoded.invalid() != null) {
        return decoded.invalid();
      }
      Command command = decoded.command();
      if (command instanceof Command.Batch batch) {
        metrics.batchApplied(batch.commands().size());
        // Each command is judged here, on every replica, as if alone: a stale or malformed one is
        // refused in its position and the others applied, so every replica answers the whole batch
        // alike and a retry after a failover gets the full answer from any node's retry cache.
        return WireCodec.toBatchResponse(
            state.applyBatch(
                batch,
                entry.getTerm(),
                entry.getIndex(),
                logged.getStampMs(),
                (each, run) -> observed(each, run, requestContext)));
      }
      return WireCodec.toResponse(
          observed(
              command,
              () -> state.apply(command, entry.getTerm(), entry.getIndex(), logged.getStampMs()),
              requestContext));
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

  /** Runs the core's {@code apply} and shows the metrics what it answered, and how fast. */
  private Outcome observed(Command command, Supplier<Outcome> apply, Object requestContext) {
    long start = System.nanoTime();
    Outcome outcome = apply.get();
    metrics.applied(command, outcome, System.nanoTime() - start, requestContext);
    return outcome;
  }
}
