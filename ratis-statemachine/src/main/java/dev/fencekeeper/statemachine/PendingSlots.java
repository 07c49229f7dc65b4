package dev.fencekeeper.statemachine;

import dev.fencekeeper.core.Code;
import dev.fencekeeper.core.Outcome;
import java.util.concurrent.Semaphore;

/**
 * Bounds the client commands a leader holds between accepting them ({@code startTransaction}, or
 * its client port queueing them) and applying them: one slot each. When every slot is taken the
 * command is refused at once with OVERLOADED, before it is logged, so nothing about it was applied
 * and the caller may simply retry later; queueing it instead would let a burst grow the leader's
 * memory and everyone's latency without bound.
 */
public final class PendingSlots {
  private final int capacity;
  private final Semaphore free;

  PendingSlots(int capacity) {
    this.capacity = capacity;
    this.free = new Semaphore(capacity);
  }

  /** A slot, or null when none is free. */
  PendingSlot tryTake() {
    return tryTake(1);
  }

  /** One slot per command of a batch, all or none; null when too few are free. */
  public PendingSlot tryTake(int commands) {
    return free.tryAcquire(commands) ? new PendingSlot(free, commands) : null;
  }

  /** The answer to a command that found no free slot. */
  public Outcome overloaded() {
    return Outcome.of(Code.OVERLOADED)
        .message(
            "the leader already holds "
                + capacity
                + " pending commands (overload.pending-writes.max);"
                + " nothing was applied, retry later")
        .build();
  }

  public int inUse() {
    return capacity - free.availablePermits();
  }
}
