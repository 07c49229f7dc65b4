package dev.fencekeeper.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.client.Lease.LossReason;
import dev.fencekeeper.client.Lease.State;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * A lease's local view under random sequences of pauses, session renewals (answered late, after a
 * pause, or not at all), failed explicit renewals, losses the cluster reports, closes and abandons,
 * on a fake clock: {@code state()}, {@code isValid()} and {@code remaining()} agree at every
 * moment, and the deadline is never later than the latest renewal the view accepted allows.
 */
class LeaseViewPropertyTest {
  private static final long TTL = 3_000_000_000L; // 3 s, in nanoseconds
  private static final long START = 1_000_000_000_000L; // an arbitrary nanoTime origin

  enum Kind {
    PAUSE, // the process stalls (GC, SIGSTOP): time passes, nothing is answered
    RENEWED, // a keep-alive or renew sent `amount` ago is answered RENEWED now
    RENEW_FAILED, // an explicit renew answered UNAVAILABLE / OVERLOADED
    LOST, // the cluster says the lease ended (an event, a LEASE_LOST answer)
    CLOSED, // the holder closes or abandons it
    ANNOUNCE // a timer or a caller asks what to tell the listeners
  }

  record Step(Kind kind, long amount) {}

  @Provide
  Arbitrary<List<Step>> steps() {
    // Mostly short pauses and recent sends, so that leases live through many steps; now and then
    // a pause past the whole TTL.
    Arbitrary<Long> amount =
        Arbitraries.frequencyOf(
            Tuple.of(6, Arbitraries.longs().between(0, TTL / 4)),
            Tuple.of(1, Arbitraries.longs().between(0, 2 * TTL)));
    Arbitrary<Step> step = Combinators.combine(Arbitraries.of(Kind.class), amount).as(Step::new);
    return step.list().ofMaxSize(60);
  }

  @Property(tries = 2_000)
  void stateValidityAndRemainingAgreeAtEveryMoment(@ForAll("steps") List<Step> steps) {
    LeaseView view = new LeaseView(TTL, START);
    long now = START;
    // The model: the latest deadline a renewal may justify, and whether the view became final.
    long modelDeadline = START + Lease.localTtlNanos(TTL);
    State finalState = null;
    int announced = 0;
    boolean failedSinceRenewal = false;
    for (Step s : steps) {
      switch (s.kind()) {
        case PAUSE -> now += s.amount();
        case RENEWED -> {
          long sent = Math.max(START, now - Math.min(s.amount(), TTL));
          boolean wasValid = finalState == null && now < modelDeadline;
          boolean live = view.renewed(sent, TTL, now);
          assertThat(live)
              .as("a renewal is taken exactly while the lease is valid")
              .isEqualTo(wasValid);
          if (wasValid) {
            modelDeadline = Math.max(modelDeadline, sent + Lease.localTtlNanos(TTL));
            failedSinceRenewal = false;
          }
        }
        case RENEW_FAILED -> {
          view.renewalFailed();
          if (finalState == null) {
            failedSinceRenewal = true;
          }
        }
        case LOST -> view.lost(LossReason.LEASE_LOST, now);
        case CLOSED -> view.closed(now);
        case ANNOUNCE -> {
          LossReason loss = view.lossToAnnounce(now);
          if (loss != null) {
            announced++;
            assertThat(view.state(now)).isEqualTo(State.LOST);
          }
        }
      }
      assertThat(view.deadlineNanos())
          .as("the deadline is the one the accepted renewals justify, never later")
          .isEqualTo(modelDeadline);
      // Every moment from now until past the deadline, not only the moments a step happened at.
      for (long t : new long[] {now, now + 1, modelDeadline - 1, modelDeadline, now + 2 * TTL}) {
        if (t < now) {
          continue;
        }
        State state = view.state(t);
        boolean valid = view.isValid(t);
        long remaining = view.remainingNanos(t);
        assertThat(valid)
            .as("isValid() at %d agrees with state() %s", t - START, state)
            .isEqualTo(state == State.HELD || state == State.AT_RISK);
        assertThat(remaining > 0).as("remaining() > 0 exactly while valid").isEqualTo(valid);
        assertThat(remaining).isBetween(0L, Lease.localTtlNanos(TTL));
        if (t >= modelDeadline) {
          assertThat(state).as("past the deadline").isIn(State.LOST, State.CLOSED);
        }
        if (state == State.HELD) {
          assertThat(remaining)
              .as("HELD leaves more than a third of the TTL")
              .isGreaterThan(TTL / 3);
          assertThat(failedSinceRenewal).as("HELD after a failed renewal").isFalse();
        }
        assertThat(view.lossReason(t) != null)
            .as("a loss reason exactly when LOST")
            .isEqualTo(state == State.LOST);
      }
      // LOST and CLOSED are final.
      State nowState = view.state(now);
      if (finalState != null) {
        assertThat(nowState).as("final state kept").isEqualTo(finalState);
      } else if (nowState == State.LOST || nowState == State.CLOSED) {
        finalState = nowState;
      }
    }
    assertThat(announced).as("a loss is announced at most once").isLessThanOrEqualTo(1);
  }
}
