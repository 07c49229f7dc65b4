package dev.fencekeeper.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

class FollowerLagTrackerTest {
  private static final long SECOND = 1_000_000_000L;

  private final FollowerLagTracker tracker = new FollowerLagTracker(Duration.ofSeconds(2));

  private FollowerLag only(long nowNanos) {
    List<FollowerLag> view = tracker.view(nowNanos);
    assertThat(view).hasSize(1);
    return view.get(0);
  }

  // Guarantee: a follower that holds the leader's whole log has no lag, however long ago its match
  // index last moved (an idle cluster appends nothing).
  @Test
  void caughtUpFollowerHasNoLag() {
    tracker.sample(0, "n2", 10, 10);
    tracker.sample(60 * SECOND, "n2", 10, 10);

    assertThat(only(61 * SECOND)).isEqualTo(new FollowerLag("n2", 10, 0, 0.0, false));
  }

  // Guarantee: a follower that stops advancing while the leader's log grows counts its lag from
  // the last sample it was fine in, and lags once that passes the bound, not before.
  @Test
  void stalledFollowerLagsOncePastTheBound() {
    tracker.sample(0, "n2", 10, 10);
    tracker.sample(SECOND, "n2", 10, 15);

    assertThat(only(2 * SECOND)).isEqualTo(new FollowerLag("n2", 10, 5, 2.0, false));
    tracker.sample(2 * SECOND + 1, "n2", 10, 40);
    assertThat(only(2 * SECOND + 1)).isEqualTo(new FollowerLag("n2", 10, 30, 2.000000001, true));
  }

  // Guarantee: a follower that sat caught up on an idle log for a long time and then stops counts
  // its lag from the last sample that found it caught up, not from when its match index moved.
  @Test
  void idleCaughtUpFollowerCountsFromWhenItWasLastCaughtUp() {
    tracker.sample(0, "n2", 10, 10);
    tracker.sample(60 * SECOND, "n2", 10, 10);
    tracker.sample(60 * SECOND + 200_000_000L, "n2", 10, 12);

    assertThat(only(61 * SECOND)).isEqualTo(new FollowerLag("n2", 10, 2, 1.0, false));
  }

  // Guarantee: a follower far behind but still advancing is catching up, not lagging; its entries
  // say how far it has to go.
  @Test
  void advancingFollowerIsNotLagging() {
    for (int s = 0; s < 30; s++) {
      tracker.sample(s * SECOND, "n3", 100L * s, 100L * s + 5000);
    }
    assertThat(only(29 * SECOND)).isEqualTo(new FollowerLag("n3", 2900, 5000, 0.0, false));
  }

  // Guarantee: a stalled follower that catches up clears at once.
  @Test
  void catchingUpClearsTheLag() {
    tracker.sample(0, "n2", 10, 10);
    tracker.sample(10 * SECOND, "n2", 10, 50);
    assertThat(only(10 * SECOND).lagging()).isTrue();

    tracker.sample(11 * SECOND, "n2", 50, 50);
    assertThat(only(12 * SECOND)).isEqualTo(new FollowerLag("n2", 50, 0, 0.0, false));
  }

  // Guarantee: followers that left the configuration, or all of them when leadership ends, are
  // forgotten; a new leader's first sample of a stalled follower starts the count afresh.
  @Test
  void forgetsFollowersThatLeftAndEverythingOnClear() {
    tracker.sample(0, "n2", 1, 5);
    tracker.sample(0, "n3", 1, 5);
    tracker.retainOnly(Set.of("n3"));
    assertThat(tracker.view(SECOND)).extracting(FollowerLag::peer).containsExactly("n3");

    tracker.clear();
    assertThat(tracker.view(SECOND)).isEmpty();
    tracker.sample(100 * SECOND, "n3", 1, 5);
    assertThat(only(100 * SECOND).lagSeconds()).isZero();
  }

  @Test
  void boundMustBePositive() {
    assertThatThrownBy(() -> new FollowerLagTracker(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class);
  }

  /** One sample: time step in milliseconds, match index, leader's last index. */
  record Step(long millis, long match, long leaderLast) {}

  @Provide
  Arbitrary<List<Step>> runs() {
    Arbitrary<Step> step =
        Combinators.combine(
                Arbitraries.longs().between(0, 3000),
                // Few values, so that repeats, catching up and falling behind again are common.
                Arbitraries.longs().between(0, 4),
                Arbitraries.longs().between(0, 4))
            .as(Step::new);
    return step.list().ofMinSize(1).ofMaxSize(40);
  }

  // Guarantee, over any sequence of samples: lag in entries is never negative and is the leader's
  // last index minus the match index when behind; lag in time is 0 exactly when the follower is
  // not behind, never more than the time since the first sample, and equals the time since the
  // last sample that found the follower caught up or with a changed match index; lagging is
  // exactly "lag in time past the bound".
  @Property(tries = 500)
  void lagFollowsTheSamples(@ForAll("runs") List<Step> run, @ForAll boolean probeLater) {
    FollowerLagTracker t = new FollowerLagTracker(Duration.ofSeconds(2));
    long now = 0;
    long lastFine = 0;
    Long previousMatch = null;
    for (Step s : run) {
      now += s.millis() * 1_000_000;
      t.sample(now, "n2", s.match(), s.leaderLast());
      if (previousMatch == null || s.match() >= s.leaderLast() || s.match() != previousMatch) {
        lastFine = now;
      }
      previousMatch = s.match();
    }
    Step last = run.get(run.size() - 1);
    long probe = probeLater ? now + 1_500_000_000L : now;
    FollowerLag lag = t.view(probe).get(0);

    long behind = Math.max(0, last.leaderLast() - last.match());
    assertThat(lag.lagEntries()).isEqualTo(behind);
    assertThat(lag.matchIndex()).isEqualTo(last.match());
    double expectedSeconds = behind == 0 ? 0 : (probe - lastFine) / 1e9;
    assertThat(lag.lagSeconds()).isEqualTo(expectedSeconds);
    assertThat(lag.lagSeconds()).isBetween(0.0, probe / 1e9);
    assertThat(lag.lagging()).isEqualTo(lag.lagSeconds() > 2.0);
  }
}
