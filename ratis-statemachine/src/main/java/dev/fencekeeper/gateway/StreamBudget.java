package dev.fencekeeper.gateway;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/** The streams (watch, session) each identity holds open on one gateway, bounded per identity. */
final class StreamBudget {
  private final int perCaller;
  private final ConcurrentMap<String, Integer> open = new ConcurrentHashMap<>();

  StreamBudget(int perCaller) {
    this.perCaller = perCaller;
  }

  /** Takes one stream for {@code caller}, or false when it holds its limit already. */
  boolean take(String caller) {
    boolean[] taken = {false};
    open.compute(
        caller,
        (k, n) -> {
          int now = n == null ? 0 : n;
          if (now >= perCaller) {
            return n;
          }
          taken[0] = true;
          return now + 1;
        });
    return taken[0];
  }

  void release(String caller) {
    open.computeIfPresent(caller, (k, n) -> n <= 1 ? null : n - 1);
  }

  int open(String caller) {
    return open.getOrDefault(caller, 0);
  }
}
