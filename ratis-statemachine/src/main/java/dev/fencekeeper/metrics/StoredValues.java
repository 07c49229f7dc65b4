package dev.fencekeeper.metrics;

import dev.fencekeeper.core.Command;
import dev.fencekeeper.core.FencingState;
import dev.fencekeeper.core.ResourceRecord;
import dev.fencekeeper.core.ValueRecord;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How many protected keys the state holds and how many value bytes they take, kept up to date per
 * write instead of counted per scrape.
 *
 * <p>Values change only when a write is applied, and only under the keys that write names; a
 * resource record is forgotten only once it holds no values. So the figures move by the difference
 * between the named keys' records before and after each write — O(keys in the write). When the
 * state object itself is replaced (a snapshot loaded or installed), the next call recounts it once,
 * O(keys).
 *
 * <p>Callers hold the state machine's lock (the write lock around a write, at least the read lock
 * otherwise); this class synchronises only its own figures.
 */
final class StoredValues {
  private FencingState accounted;
  private long keys;
  private long bytes;

  /** The named keys' records before a write; pass it to {@link #after}. */
  record Probe(String resource, Map<String, ValueRecord> before) {}

  synchronized Probe before(FencingState state, Command.Write write) {
    track(state);
    ResourceRecord r = state.resources().get(write.resource());
    Map<String, ValueRecord> before = new LinkedHashMap<>();
    for (Command.KeyWrite kw : write.writes()) {
      if (!before.containsKey(kw.key())) {
        before.put(kw.key(), r == null ? null : r.values().get(kw.key()));
      }
    }
    return new Probe(write.resource(), before);
  }

  synchronized void after(FencingState state, Probe probe) {
    if (state != accounted) {
      track(state);
      return;
    }
    ResourceRecord r = state.resources().get(probe.resource());
    for (Map.Entry<String, ValueRecord> e : probe.before().entrySet()) {
      ValueRecord old = e.getValue();
      ValueRecord now = r == null ? null : r.values().get(e.getKey());
      if (now != old) {
        bytes += size(now) - size(old);
        keys += (now == null ? 0 : 1) - (old == null ? 0 : 1);
      }
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

  private static long size(ValueRecord v) {
    return v == null ? 0 : v.value().length;
  }
}
