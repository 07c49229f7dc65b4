package dev.fencekeeper.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The leader's expiry ticker sleeps until the earliest deadline, is woken by an earlier one, ticks
 * once per deadline reached, and not at all while nothing is due. The leader's clock here is the
 * monotonic clock; a tick "applies" by clearing the deadline, as a tick that settles every due
 * lease does.
 */
@Timeout(30)
class ExpiryTickerTest {
  private static final long FAR_MS = 600_000;
  private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
  private final long startNanos = System.nanoTime();
  private final AtomicLong deadline = new AtomicLong(Long.MAX_VALUE);
  private final List<Long> ticksAtMs = new CopyOnWriteArrayList<>();
  private final AtomicInteger failuresLeft = new AtomicInteger();
  private final ExpiryTicker ticker =
      new ExpiryTicker(timer, this::nowMs, deadline::get, this::tick);

  private long nowMs() {
    return (System.nanoTime() - startNanos) / 1_000_000;
  }

  private CompletableFuture<Boolean> tick() {
    ticksAtMs.add(nowMs());
    if (failuresLeft.getAndDecrement() > 0) {
      return CompletableFuture.completedFuture(false); // not committed: the deadline stays
    }
    deadline.set(Long.MAX_VALUE);
    return CompletableFuture.completedFuture(true);
  }

  @AfterEach
  void stopTimer() {
    timer.shutdownNow();
  }

  // Guarantee: a deadline that an applied entry moves earlier while the ticker sleeps toward a far
  // one is ticked at that earlier deadline, not slept through.
  @Test
  void anEarlierDeadlineWakesTheSleepingTicker() throws Exception {
    deadline.set(nowMs() + FAR_MS);
    ticker.start();
    Thread.sleep(100); // asleep toward the far deadline
    long early = nowMs() + 150;
    deadline.set(early);
    ticker.deadlineMoved(early);

    await().atMost(Duration.ofSeconds(10)).until(() -> !ticksAtMs.isEmpty());
    assertThat(ticksAtMs.get(0)).as("ticked at").isGreaterThanOrEqualTo(early);
  }

  // Guarantee: a deadline is ticked once, when the leader's clock reaches it (within the timer's
  // accuracy on a loaded machine), never before; with nothing due, nothing is proposed.
  @Test
  void aDeadlineIsTickedOnceWhenReachedAndNothingWhileNoneIsDue() throws Exception {
    ticker.start();
    Thread.sleep(200);
    assertThat(ticksAtMs).as("ticks with nothing due").isEmpty();

    long due = nowMs() + 200;
    deadline.set(due);
    ticker.deadlineMoved(due);
    await().atMost(Duration.ofSeconds(10)).until(() -> !ticksAtMs.isEmpty());
    Thread.sleep(200);

    assertThat(ticksAtMs).hasSize(1);
    assertThat(ticksAtMs.get(0)).isBetween(due, due + 1_000);
  }

  // Guarantee: a tick that was not applied is proposed again RETRY_MS later, until one is.
  @Test
  void aTickThatDidNotCommitIsProposedAgain() {
    failuresLeft.set(2);
    deadline.set(nowMs() + 50);
    ticker.start();

    await().atMost(Duration.ofSeconds(10)).until(() -> ticksAtMs.size() == 3);
    assertThat(ticksAtMs.get(2) - ticksAtMs.get(0))
        .isGreaterThanOrEqualTo(2 * ExpiryTicker.RETRY_MS);
    assertThat(deadline.get()).isEqualTo(Long.MAX_VALUE);
  }

  // Guarantee: a node that stopped leading proposes no tick, whatever falls due or moves.
  @Test
  void aStoppedTickerProposesNothing() throws Exception {
    long due = nowMs() + 100;
    deadline.set(due);
    ticker.start();
    ticker.stop();
    ticker.deadlineMoved(due - 50);
    Thread.sleep(400);
    timer.shutdown();
    assertThat(timer.awaitTermination(5, TimeUnit.SECONDS)).isTrue();

    assertThat(ticksAtMs).isEmpty();
  }

  // Guarantee: the sleep toward a deadline is shortened by what the leader's line may slew, so the
  // line cannot pass the deadline before the wake; never to 0.
  @Test
  void theSleepAllowsForTheSlew() {
    assertThat(ExpiryTicker.sleepMs(1)).isEqualTo(1);
    assertThat(ExpiryTicker.sleepMs(1_999)).isEqualTo(1_999);
    assertThat(ExpiryTicker.sleepMs(60_000)).isEqualTo(59_970);
    assertThat(ExpiryTicker.sleepMs(Long.MAX_VALUE / 2)).isPositive();
  }
}
