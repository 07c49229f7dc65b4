package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.config.Durations;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** What a verb may spend of its {@code --timeout} before printing. */
class TimeoutOptionTest {
  @Command(name = "timed")
  static class Timed implements Runnable {
    @Mixin TimeoutOption deadline;

    @Override
    public void run() {}
  }

  // Guarantee: a verb's budget is a whole number of milliseconds below its timeout, so the
  // messages that name it can be printed for every timeout a user may give. (A 1 ms timeout left
  // 800 us, and the write that reported it threw instead of printing UNAVAILABLE.)
  @Test
  void everyBudgetIsWholeMillisecondsBelowTheTimeout() {
    for (int ms = 1; ms <= 2_000; ms++) {
      Timed timed = new Timed();
      new CommandLine(timed).parseArgs("--timeout", ms + "ms");
      Duration budget = timed.deadline.budget(Duration.ofSeconds(15));

      assertThat(budget).as("--timeout %dms", ms).isLessThan(Duration.ofMillis(ms));
      assertThat(Durations.format(budget)).as("--timeout %dms", ms).isNotEmpty();
    }
  }
}
