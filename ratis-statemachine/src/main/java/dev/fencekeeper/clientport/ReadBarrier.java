package dev.fencekeeper.clientport;

import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.ratis.protocol.RaftClientReply;

/**
 * What makes a read on the leader linearizable: the read waits until an entry this node proposed
 * after the read arrived has been committed and applied here. A leader that has been replaced can
 * no longer commit anything, so it answers no read from its old state; and once the entry is
 * applied, this node's state holds every command acknowledged before the read arrived.
 *
 * <p>Ratis's read index is not enough on its own: it answers at once, without a round of
 * heartbeats, when an earlier round already confirmed the commit index it reads at, so a leader cut
 * off from its followers passes reads until it notices their silence, up to twice the election
 * timeout later (docs/ratis-workarounds.md).
 *
 * <p>Reads share barriers: those that arrive while one is in flight wait for the next, proposed as
 * soon as it completes, so a burst of reads costs two entries, not one each.
 */
final class ReadBarrier {
  private final Supplier<CompletableFuture<RaftClientReply>> propose;
  private CompletableFuture<Boolean> next;
  private boolean inFlight;

  /** {@code propose} appends one barrier entry through this node, which must lead. */
  ReadBarrier(Supplier<CompletableFuture<RaftClientReply>> propose) {
    this.propose = propose;
  }

  /**
   * Completes true once a barrier proposed after this call has been applied on this node, false if
   * it could not be committed through this node (it does not lead, or no longer); never fails.
   */
  CompletableFuture<Boolean> pass() {
    CompletableFuture<Boolean> waitFor;
    boolean start;
    synchronized (this) {
      if (next == null) {
        next = new CompletableFuture<>();
      }
      waitFor = next;
      start = !inFlight;
      if (start) {
        next = null;
        inFlight = true;
      }
    }
    if (start) {
      propose(waitFor);
    }
    return waitFor;
  }

  private void propose(CompletableFuture<Boolean> readers) {
    CompletableFuture<RaftClientReply> entry;
    try {
      entry = propose.get();
    } catch (RuntimeException e) {
      entry = CompletableFuture.failedFuture(e);
    }
    entry.whenComplete(
        (reply, error) -> {
          CompletableFuture<Boolean> waiting;
          synchronized (this) {
            waiting = next;
            next = null;
            inFlight = waiting != null;
          }
          readers.complete(error == null && reply.isSuccess());
          if (waiting != null) {
            propose(waiting);
          }
        });
  }
}
