package dev.fencekeeper.server;

import dev.fencekeeper.clientport.ReadSlots;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.Semaphore;

/**
 * Bounds the reads a node holds between receiving them and sending their answers ({@code
 * overload.pending-reads.max}): one slot each, for linearizable reads (read-index round, then the
 * query), stale reads and watches alike. A read that finds no free slot is answered OVERLOADED at
 * once instead of waiting; without the bound a flood of reads would pile up in the node without
 * limit.
 *
 * <p>Ratis's client path and the client port ({@link ReadSlots}) share the one bound. Counted at
 * the gRPC layer because that is the only place that sees a read arrive: Ratis hands a linearizable
 * read to the state machine only after its read index is reached, and offers no hook before.
 */
final class ReadsInFlight implements ReadSlots {
  private final int capacity;
  private final Semaphore free;

  ReadsInFlight(int capacity) {
    this.capacity = capacity;
    this.free = new Semaphore(capacity);
  }

  int inUse() {
    return capacity - free.availablePermits();
  }

  @Override
  public boolean tryTake() {
    return free.tryAcquire();
  }

  @Override
  public void release() {
    free.release();
  }

  /** The reads of one gRPC call: one client's stream of requests and answers. */
  Stream openStream() {
    return new Stream();
  }

  /**
   * Slots held by one stream, by Ratis call id: the answer to a request names the call id it
   * answers, and a client that resends a request (same call id) on the same stream is still one
   * read.
   */
  final class Stream {
    private final Set<Long> held = new HashSet<>();
    private boolean closed;

    /**
     * Whether read {@code callId} may go on; false means every slot is taken, so it must be
     * refused.
     */
    synchronized boolean admit(long callId) {
      if (closed || held.contains(callId)) {
        return true; // Ratis refuses requests on a closed stream itself; a resend keeps its slot
      }
      if (!free.tryAcquire()) {
        return false;
      }
      held.add(callId);
      return true;
    }

    /** The answer to {@code callId} was sent (for a request that held no slot, nothing happens). */
    synchronized void answered(long callId) {
      if (held.remove(callId)) {
        free.release();
      }
    }

    /**
     * The stream ended, answered or not (closed, cancelled, the client gone): every slot comes
     * back.
     */
    synchronized void close() {
      closed = true;
      free.release(held.size());
      held.clear();
    }
  }
}
