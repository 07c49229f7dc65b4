package dev.fencekeeper.tools.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;

/**
 * The hand-off figure, on an in-process fair lock whose grant, write and release take known times.
 */
class HandOffTest {
  private static final long GRANT_MS = 10;
  private static final long WRITE_MS = 5;
  private static final long RELEASE_COMMIT_MS = 200;

  // Guarantee: a hand-off runs from the release being committed (its call returned), not from it
  // being sent, to the next holder's first accepted write: here the grant and the write (15 ms),
  // without the release's own 200 ms.
  @Test
  void handOffRunsFromTheCommittedReleaseToTheNextHoldersFirstWrite() throws Exception {
    ReentrantLock lock = new ReentrantLock(true);
    HandOff.Figures f =
        HandOff.measure(
            "fake",
            2,
            i ->
                new HandOff.Contender() {
                  @Override
                  public Object acquire() throws InterruptedException {
                    lock.lockInterruptibly();
                    Thread.sleep(GRANT_MS);
                    return lock;
                  }

                  @Override
                  public boolean write(Object held) throws InterruptedException {
                    Thread.sleep(WRITE_MS);
                    return true;
                  }

                  @Override
                  public void release(Object held) throws InterruptedException {
                    Thread.sleep(
                        RELEASE_COMMIT_MS); // replicated and committed, then the next waiter's turn
                    lock.unlock();
                  }
                },
            Duration.ofMillis(300),
            Duration.ofMillis(1500));

    assertThat(f.handOffs()).isGreaterThan(0);
    assertThat(f.failed()).isZero();
    // Generous above (a loaded box), but below what counting from the release's send would give.
    assertThat(f.percentileMs(50))
        .isBetween((double) GRANT_MS + WRITE_MS - 1, (double) RELEASE_COMMIT_MS - 1);
  }
}
