package dev.fencekeeper.statemachine;

import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Slots taken by one log entry; releasing them twice (applied after a lost leadership, say) frees
 * them once.
 */
public final class PendingSlot {
  private final Semaphore owner;
  private final int permits;
  private final AtomicBoolean released = new AtomicBoolean();

  PendingSlot(Semaphore owner, int permits) {
    this.owner = owner;
    this.permits = permits;
  }

  public void release() {
    if (released.compareAndSet(false, true)) {
      owner.release(permits);
    }
  }
}
