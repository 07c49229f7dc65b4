package dev.fencekeeper.core;

import dev.fencekeeper.config.Limits;
import dev.fencekeeper.testing.TestLimits;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * A {@link FencingState} driven like the Raft log drives it: every command gets the next entry
 * index and an explicit leader stamp. Tests state the stamp of every command, so time is always
 * visible.
 */
final class Harness {
  /** Limits for the table tests: {@link TestLimits#SMALL}. */
  static final Limits LIMITS = TestLimits.SMALL;

  /**
   * A stamp far from zero, so "time zero" defaults cannot pass for correct expiries by accident.
   */
  static final long T0 = 1_700_000_000_000L;

  final FencingState state;
  long index; // of the last entry applied

  Harness() {
    this(LIMITS);
  }

  Harness(Limits limits) {
    this.state = new FencingState(limits);
  }

  long lastIndex() {
    return index;
  }

  Outcome apply(long stampMs, Command command) {
    return state.apply(command, ++index, stampMs);
  }

  /** Applies an entry of Raft term {@code term}, as a leader of that term would have logged it. */
  Outcome inTerm(long term, long stampMs, Command command) {
    return state.apply(command, term, ++index, stampMs);
  }

  Outcome acquire(long at, String resource, String owner, long ttlMs) {
    return apply(at, new Command.Acquire(resource, owner, ttlMs));
  }

  Outcome renew(long at, String resource, long token, long ttlMs) {
    return apply(at, new Command.Renew(resource, token, ttlMs));
  }

  Outcome release(long at, String resource, long token) {
    return apply(at, new Command.Release(resource, token));
  }

  Outcome put(long at, String resource, long token, String key, String value) {
    return apply(
        at,
        new Command.Write(resource, token, List.of(Command.KeyWrite.put(key, bytes(value))), ""));
  }

  Outcome write(
      long at, String resource, long token, String requestId, Command.KeyWrite... writes) {
    return apply(at, new Command.Write(resource, token, List.of(writes), requestId));
  }

  Outcome takeover(long at) {
    return apply(at, new Command.Takeover());
  }

  Outcome tick(long at) {
    return apply(at, new Command.Tick());
  }

  /** The state without nowMs. */
  String dump() {
    return StateDump.of(state);
  }

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static String text(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }
}
