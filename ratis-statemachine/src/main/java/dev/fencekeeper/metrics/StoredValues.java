package dev.fencekeeper.metrics;

import dev.fencekeeper.core.FencingState;
import dev.fencekeeper.core.Outcome;
import dev.fencekeeper.core.ResourceRecord;
import dev.fencekeeper.core.ValueRecord;

/**
 * How many protected keys the state holds and how many value bytes they take, kept up to date per
 * write instead of counted per scrape.
 *
 * <p>Values change only when a write is applied, and a resource record is forgotten only once it
 * holds no values. So the figures move by the keys and bytes each accepted write reports it added
 * or removed ({@link Outcome.Facts}) — O(1) per write. When the state object itself is replaced (a
 * snapshot loaded or installed), the next read recounts it once, O(keys).
 *
 * <p>Callers hold the state machine's lock (the write lock after a write, at least the read lock
 * otherwise); this class synchronises only its own figures.
 */
final class StoredValues {
  private FencingState accounted;
  private long keys;
  private long bytes;

  /**
   * Moves the figures by what an applied write reports it changed. A write to a state other than
   * the one counted (a snapshot was loaded meanwhile) is corrected by the recount that {@link
   * #track} makes on the next read.
   */
  synchronized void applied(Outcome.Facts facts) {
    if (accounted != null) {
      keys += facts.storedKeysDelta();
      bytes += facts.storedBytesDelta();
    }
  }

  /** Recounts if {@code state} is not the object the figures describe. */
  synchronized void track(FencingState state) {
    if (state == accounted) {
      return;
    }
    long k = 0;
    long b = 0;
    for (ResourceRecord r : state.resources().values()) {
      k += r.values().size();
      for (ValueRecord v : r.values().values()) {
        b += v.value().length;
      }
    }
    keys = k;
    bytes = b;
    accounted = state;
  }

  synchronized long keys() {
    return keys;
  }

  synchronized long bytes() {
    return bytes;
  }
}
