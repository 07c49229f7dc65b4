package dev.fencekeeper.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A watcher polls while its check finds more to do, not at all once settled, and checks again as
 * soon as it is woken: the follower watch on a node that does not lead, and the cluster-id keeper
 * once it knows the id and every member, cost no wake-ups until an event gives them work.
 */
@Timeout(30)
class PollUntilSettledTest {
  private static final Duration PERIOD = Duration.ofMillis(50);
  private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
  private final AtomicInteger checks = new AtomicInteger();
  private final AtomicBoolean more = new AtomicBoolean();
  private final PollUntilSettled poll =
      new PollUntilSettled(
          timer,
          PERIOD,
          () -> {
            checks.incrementAndGet();
            return more.get();
          });

  @AfterEach
  void stopTimer() {
    timer.shutdownNow();
  }

  // Guarantee: a settled watcher is not checked again by the passing of time, and a wake checks it
  // at once, settled or not.
  @Test
  void aSettledWatcherSleepsUntilWoken() throws Exception {
    poll.start();
    await().atMost(Duration.ofSeconds(5)).until(() -> checks.get() == 1);
    Thread.sleep(PERIOD.toMillis() * 6);
    assertThat(checks).as("no check while settled").hasValue(1);

    poll.wake();
    await().atMost(Duration.ofSeconds(5)).until(() -> checks.get() == 2);
    Thread.sleep(PERIOD.toMillis() * 6);
    assertThat(checks).hasValue(2);
  }

  // Guarantee: while the check finds more to do it runs again every period, and once it settles
  // the polling stops.
  @Test
  void itPollsWhileThereIsMoreToDoAndStopsOnceSettled() throws Exception {
    more.set(true);
    poll.start();
    await().atMost(Duration.ofSeconds(5)).until(() -> checks.get() >= 4);
    more.set(false);
    int settledAt = await().atMost(Duration.ofSeconds(5)).until(checks::get, n -> n >= 5);
    Thread.sleep(PERIOD.toMillis() * 6);
    assertThat(checks.get()).as("no check after settling").isLessThanOrEqualTo(settledAt + 1);
  }

  // Guarantee: wakes while polling do not start further polling chains: the rate stays one check
  // a period (plus one per wake).
  @Test
  void wakesWhilePollingDoNotMultiplyTheChecks() throws Exception {
    more.set(true);
    poll.start();
    for (int i = 0; i < 10; i++) {
      poll.wake();
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> checks.get() >= 11);
    int before = checks.get();
    Thread.sleep(PERIOD.toMillis() * 10);
    // Eleven chains would run about 110 checks in ten periods; one runs at most ten.
    assertThat(checks.get() - before).isLessThanOrEqualTo(20);
  }
}
