package dev.fencekeeper.server;

import dev.fencekeeper.clientport.ReadSlots;
import java.util.concurrent.Semaphore;

/**
 * Bounds the reads a node holds between receiving them and sending their answers ({@code
 * overload.pending-reads.max}): one slot each, for linearizable reads (read barrier, then the
 * query), stale reads and watches alike. A read that finds no free slot is answered OVERLOADED at
 * once instead of waiting; without the bound a flood of reads would pile up in the node without
 * limit.
 *
 * <p>Taken by the client port ({@link ReadSlots}) when a read arrives, before it waits for
 * anything, and given back when it is answered.
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
}
