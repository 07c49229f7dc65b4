package dev.fencekeeper.clientport;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** How many of one kind of long-lived call each client identity holds open on this node. */
final class IdentityCounts {
  private final ConcurrentHashMap<String, AtomicInteger> open = new ConcurrentHashMap<>();

  /** Counts one more for {@code identity} unless it already holds {@code max}; false then. */
  boolean tryOpen(String identity, int max) {
    boolean[] taken = new boolean[1];
    open.compute(
        identity,
        (id, n) -> {
          AtomicInteger count = n == null ? new AtomicInteger() : n;
          if (count.get() < max) {
            count.incrementAndGet();
            taken[0] = true;
          }
          return count.get() == 0 ? null : count;
        });
    return taken[0];
  }

  void close(String identity) {
    open.computeIfPresent(identity, (id, n) -> n.decrementAndGet() <= 0 ? null : n);
  }

  int of(String identity) {
    AtomicInteger n = open.get(identity);
    return n == null ? 0 : n.get();
  }
}
