package dev.fencekeeper.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import com.codahale.metrics.MetricRegistry;
import dev.fencekeeper.config.Limits;
import dev.fencekeeper.core.Code;
import dev.fencekeeper.core.Command;
import dev.fencekeeper.core.FencingState;
import dev.fencekeeper.core.Outcome;
import dev.fencekeeper.core.ResourceRecord;
import dev.fencekeeper.core.ValueRecord;
import dev.fencekeeper.testing.TestLimits;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** NodeMetrics' hooks driven by a FencingState directly, the way the Ratis adapter drives them. */
@Timeout(30)
class NodeMetricsTest {
  private static final long T0 = 1_700_000_000_000L;
  private static final Limits LIMITS = TestLimits.SMALL;

  private final FencingState state = new FencingState(LIMITS);
  private final NodeMetrics metrics = NodeMetrics.create("unit-" + System.nanoTime());
  private long index;

  @AfterEach
  void close() {
    metrics.close();
  }

  /** Applies {@code command} as the adapter does: the core applies, the hooks observe after. */
  private Outcome step(long at, Command command) {
    return step(at, command, null);
  }

  private Outcome step(long at, Command command, Object requestContext) {
    long entry = ++index;
    long start = System.nanoTime();
    Outcome outcome = state.apply(command, entry, at);
    metrics.applied(command, outcome, System.nanoTime() - start, requestContext);
    metrics.leaseEvents(state.drainEvents());
    return outcome;
  }

  private long count(String name) {
    MetricRegistry r = metrics.registry();
    if (r.getCounters().containsKey(name)) {
      return r.getCounters().get(name).getCount();
    }
    return r.getTimers().get(name).getCount();
  }

  private static Command.Write put(
      String resource, long token, String key, String value, String requestId) {
    return new Command.Write(
        resource,
        token,
        List.of(Command.KeyWrite.put(key, value.getBytes(StandardCharsets.UTF_8))),
        requestId);
  }

  // Guarantee: grants, renewals, releases, expiries and revocations are counted once per lease
  // event, including a grant made to a waiter, which has no GRANTED outcome of its own.
  @Test
  void leaseLifecycleIsCountedFromEvents() {
    long a = step(T0, new Command.Acquire("r", "a", 1000)).token();
    assertThat(step(T0 + 10, new Command.Renew("r", a, 1000)).code()).isEqualTo(Code.RENEWED);
    assertThat(step(T0 + 20, new Command.Release("r", a)).code()).isEqualTo(Code.RELEASED);
    step(T0 + 30, new Command.Acquire("short", "b", 200));
    step(T0 + 500, new Command.Tick()); // past the 200 ms lease: it expires in this entry
    step(T0 + 600, new Command.Acquire("held", "c", 5000));
    assertThat(step(T0 + 610, new Command.Revoke("held", "drill")).code()).isEqualTo(Code.REVOKED);
    // A waiter is granted when the holder releases.
    long d = step(T0 + 700, new Command.Acquire("q", "d", 5000)).token();
    assertThat(step(T0 + 710, new Command.Acquire("q", "e", 5000, "wait-e", 3000, 0)).code())
        .isEqualTo(Code.WAITING);
    step(T0 + 720, new Command.Release("q", d));

    assertThat(count(NodeMetric.ACQUISITIONS_GRANTED.dropwizardName()))
        .isEqualTo(5); // r, short, held, q (d), q (waiter e)
    assertThat(count(NodeMetric.RENEWALS.dropwizardName())).isEqualTo(1);
    assertThat(count(NodeMetric.RELEASES.dropwizardName())).isEqualTo(2);
    assertThat(count(NodeMetric.EXPIRIES.dropwizardName())).isEqualTo(1);
    assertThat(count(NodeMetric.REVOCATIONS.dropwizardName())).isEqualTo(1);
    assertThat(count(NodeMetric.ACQUISITIONS_WAITED.dropwizardName())).isEqualTo(1);
  }

  // Guarantee: a refused acquire counts as held (HELD or LOCK_DELAYED), a queued one as waited
  // once, however often its client re-sends it to stay queued; a retried granted acquire is not a
  // new grant.
  @Test
  void heldAndWaitedAcquisitions() {
    step(T0, new Command.Acquire("r", "a", 5000, "acq-a", 0, 0));
    assertThat(step(T0 + 1, new Command.Acquire("r", "a", 5000, "acq-a", 0, 0)).code())
        .isEqualTo(Code.GRANTED);
    assertThat(step(T0 + 2, new Command.Acquire("r", "b", 5000)).code()).isEqualTo(Code.HELD);
    for (int i = 0; i < 3; i++) {
      assertThat(step(T0 + 10 + i, new Command.Acquire("r", "c", 5000, "wait-c", 4000, 0)).code())
          .isEqualTo(Code.WAITING);
    }
    assertThat(count(NodeMetric.ACQUISITIONS_GRANTED.dropwizardName())).isEqualTo(1);
    assertThat(count(NodeMetric.ACQUISITIONS_HELD.dropwizardName())).isEqualTo(1);
    assertThat(count(NodeMetric.ACQUISITIONS_WAITED.dropwizardName())).isEqualTo(1);
  }

  // Guarantee: every write is counted exactly once: accepted, answered from its receipt, or
  // rejected under its reason.
  @Test
  void writesByOutcome() {
    long old = step(T0, new Command.Acquire("r", "a", 200)).token();
    step(T0 + 500, new Command.Tick()); // old lease expires
    assertThat(step(T0 + 510, put("r", old, "k", "late", "w0")).code())
        .isEqualTo(Code.LEASE_EXPIRED);
    long token = step(T0 + 520, new Command.Acquire("r", "b", 5000)).token();
    assertThat(step(T0 + 530, put("r", token, "k", "v1", "w1")).code()).isEqualTo(Code.ACCEPTED);
    assertThat(step(T0 + 540, put("r", token, "k", "v1", "w1")).code())
        .isEqualTo(Code.ACCEPTED); // retry
    assertThat(step(T0 + 550, put("r", old, "k", "stale", "w2")).code())
        .isEqualTo(Code.STALE_TOKEN);
    assertThat(step(T0 + 560, put("r", token + 1000, "k", "x", "w3")).code())
        .isEqualTo(Code.UNKNOWN_TOKEN);
    assertThat(step(T0 + 570, put("r", token, "", "x", "w4")).code())
        .isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(step(T0 + 580, new Command.Acquire("", "a", 5000)).code())
        .isEqualTo(Code.INVALID_ARGUMENT);

    assertThat(count(NodeMetric.WRITES_ACCEPTED.dropwizardName())).isEqualTo(1);
    assertThat(count(NodeMetric.WRITES_DEDUPLICATED.dropwizardName())).isEqualTo(1);
    assertThat(count(NodeMetric.WRITES_REJECTED.dropwizardName(List.of("STALE_TOKEN"))))
        .isEqualTo(1);
    assertThat(count(NodeMetric.WRITES_REJECTED.dropwizardName(List.of("LEASE_EXPIRED"))))
        .isEqualTo(1);
    assertThat(count(NodeMetric.WRITES_REJECTED.dropwizardName(List.of("UNKNOWN_TOKEN"))))
        .isEqualTo(1);
    assertThat(count(NodeMetric.WRITES_REJECTED.dropwizardName(List.of("INVALID_ARGUMENT"))))
        .isEqualTo(1);
    assertThat(count(NodeMetric.REQUESTS_INVALID.dropwizardName()))
        .isEqualTo(1); // the invalid acquire
  }

  // Guarantee: requests refused on the leader without a log entry are counted by their reason:
  // undecodable or invalid ones as invalid requests, overloaded ones command by command; none of
  // them counts as a written or rejected write.
  @Test
  void earlyRefusalsAreCounted() {
    metrics.refusedEarly(null, refusal(Code.INVALID_ARGUMENT));
    metrics.refusedEarly(new Command.Acquire("", "a", 1000), refusal(Code.INVALID_ARGUMENT));
    Command.Write write = put("r", 5, "k", "v", "w");
    metrics.refusedEarly(new Command.Batch(List.of(write, write)), refusal(Code.OVERLOADED));

    assertThat(count(NodeMetric.REQUESTS_INVALID.dropwizardName())).isEqualTo(2);
    assertThat(count(NodeMetric.REQUESTS_OVERLOADED.dropwizardName())).isEqualTo(2);
    assertThat(count(NodeMetric.WRITES_REJECTED.dropwizardName(List.of("INVALID_ARGUMENT"))))
        .isZero();
    assertThat(count(NodeMetric.WRITES_ACCEPTED.dropwizardName())).isZero();
  }

  // Guarantee: apply latency is timed for every applied command; request latency only for entries
  // this node stamped as leader, under the command's name.
  @Test
  void latencies() {
    long token = step(T0, new Command.Acquire("r", "a", 5000), metrics.requestStarted()).token();
    step(T0 + 1, put("r", token, "k", "v", "w1"), metrics.requestStarted());
    step(T0 + 2, put("r", token, "k", "v", "w2")); // applied as a follower: no request context
    step(T0 + 3, new Command.Tick(), metrics.requestStarted());

    assertThat(count(NodeMetric.APPLY_DURATION.dropwizardName())).isEqualTo(4);
    assertThat(count(NodeMetric.REQUEST_DURATION.dropwizardName(List.of("ACQUIRE")))).isEqualTo(1);
    assertThat(count(NodeMetric.REQUEST_DURATION.dropwizardName(List.of("WRITE")))).isEqualTo(1);
    assertThat(count(NodeMetric.REQUEST_DURATION.dropwizardName(List.of("TICK")))).isEqualTo(1);
    assertThat(count(NodeMetric.REQUEST_DURATION.dropwizardName(List.of("RENEW")))).isZero();
  }

  private static Outcome refusal(Code code) {
    return Outcome.of(code).message("refused").build();
  }

  // Guarantee: the metrics count what the core reports it did (a deduplicated write, a re-queued
  // acquire), not what they would conclude from the state: here the state holds nothing that would
  // make either a retry.
  @Test
  void countsTheFactsTheCoreReports() {
    Command.Write write = put("r", 5, "k", "v", "w");
    Outcome accepted = Outcome.of(Code.ACCEPTED).build();
    metrics.applied(write, accepted, 1_000, null);
    metrics.applied(
        write,
        accepted.toBuilder().facts(new Outcome.Facts(true, false, 0, 0)).build(),
        1_000,
        null);
    Command.Acquire acquire = new Command.Acquire("r", "c", 5000, "wait-c", 4000, 0);
    Outcome waiting = Outcome.of(Code.WAITING).position(1).build();
    metrics.applied(acquire, waiting, 1_000, null);
    metrics.applied(
        acquire,
        waiting.toBuilder().facts(new Outcome.Facts(false, true, 0, 0)).build(),
        1_000,
        null);

    assertThat(count(NodeMetric.WRITES_ACCEPTED.dropwizardName())).isEqualTo(1);
    assertThat(count(NodeMetric.WRITES_DEDUPLICATED.dropwizardName())).isEqualTo(1);
    assertThat(count(NodeMetric.ACQUISITIONS_WAITED.dropwizardName())).isEqualTo(1);
  }

  // Guarantee: the maintained key and byte counts equal a full recount after any sequence of
  // accepted and rejected writes, overwrites and deletes.
  @Test
  void storedValuesMatchARecount() {
    StoredValues stored = new StoredValues();
    Random random = new Random(42);
    List<String> resources = List.of("a", "b", "c");
    List<Long> tokens = new ArrayList<>();
    long now = T0;
    for (String r : resources) {
      tokens.add(state.apply(new Command.Acquire(r, "o", 60_000), ++index, now).token());
    }
    state.drainEvents();
    stored.track(state);
    for (int i = 0; i < 2000; i++) {
      now += 1;
      int which = random.nextInt(resources.size());
      String resource = resources.get(which);
      long token =
          random.nextInt(20) == 0 ? tokens.get(which) - 1 : tokens.get(which); // some stale
      List<Command.KeyWrite> writes = new ArrayList<>();
      int n = 1 + random.nextInt(4);
      for (int k = 0; k < n; k++) {
        String key = "k" + random.nextInt(12);
        writes.add(
            random.nextInt(4) == 0
                ? Command.KeyWrite.delete(key)
                : Command.KeyWrite.put(key, new byte[random.nextInt(64)]));
      }
      Command.Write w = new Command.Write(resource, token, writes, "req-" + random.nextInt(50));
      Outcome outcome = state.apply(w, ++index, now);
      if (outcome.code() == Code.ACCEPTED) {
        stored.applied(outcome.facts());
      }
    }
    long keys = 0;
    long bytes = 0;
    for (ResourceRecord r : state.resources().values()) {
      keys += r.values().size();
      for (ValueRecord v : r.values().values()) {
        bytes += v.value().length;
      }
    }
    assertThat(keys).isPositive();
    assertThat(stored.keys()).isEqualTo(keys);
    assertThat(stored.bytes()).isEqualTo(bytes);

    // A replaced state (a snapshot loaded) is recounted, not patched.
    FencingState fresh = new FencingState(LIMITS);
    stored.track(fresh);
    assertThat(stored.keys()).isZero();
    assertThat(stored.bytes()).isZero();
  }

  // Guarantee: every command the state machine applies on its own is timed under a type that
  // /metrics declares (a command without one would find no timer, and its apply would lose the
  // rest of its metrics), and every declared type belongs to a command.
  @Test
  void everyCommandIsTimedUnderADeclaredType() {
    Set<String> named = new HashSet<>();
    for (Class<?> permitted : Command.class.getPermittedSubclasses()) {
      Class<? extends Command> type = permitted.asSubclass(Command.class);
      if (type == Command.Batch.class) {
        continue; // applied and observed command by command
      }
      assertThat(NodeMetrics.COMMAND_NAMES).as("%s", type.getSimpleName()).containsKey(type);
      named.add(NodeMetrics.COMMAND_NAMES.get(type));
    }
    assertThat(named).containsExactlyInAnyOrderElementsOf(NodeMetric.COMMANDS);
  }
}
