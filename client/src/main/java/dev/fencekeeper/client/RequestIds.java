package dev.fencekeeper.client;

import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The request ids of one {@link FencingClient}'s acquires and writes: a random prefix of the
 * client's and a counter, so that no other call of any client uses the same one. A retry of a call
 * re-sends its id, which makes the cluster apply the call at most once. Cheaper than a random UUID
 * per call, whose SecureRandom is shared by every thread of the process.
 */
final class RequestIds {
  private final String prefix = UUID.randomUUID() + "-";
  private final AtomicLong counter = new AtomicLong();

  /** An id no call has used yet. */
  String next() {
    return prefix + Long.toString(counter.incrementAndGet(), 36);
  }
}
