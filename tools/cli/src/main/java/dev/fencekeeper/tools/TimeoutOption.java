package dev.fencekeeper.tools;

import java.time.Duration;
import java.util.Optional;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/**
 * {@code --timeout D}, shared by the verbs that make calls and print their answer: the verb gives
 * up D after sending its call with UNAVAILABLE (exit 11), its only result. {@link CallDeadline}
 * enforces it around the verb, so no verb can forget to. Verbs that run until stopped ({@code
 * watch}, {@code lease hold}, {@code lease run}) give their own {@code --timeout} their own meaning
 * instead.
 */
final class TimeoutOption {
  private static final Duration PRINT_MARGIN = Duration.ofMillis(300);

  @Option(
      names = "--timeout",
      paramLabel = "DURATION",
      converter = DurationConverter.class,
      description =
          "Give up this long after the call is sent: UNAVAILABLE, exit 11 (a change cut short"
              + " may or may not have been applied). Connecting to the nodes first is bounded"
              + " by it too, separately. Default: the client's own limit per call.")
  private Duration timeout;

  Optional<Duration> timeout() {
    return Optional.ofNullable(timeout);
  }

  /**
   * How long a verb that reports whatever answers it got ({@code status}, {@code metrics}) may wait
   * for them: {@code --timeout} less a margin to print in before {@link CallDeadline} ends the
   * verb, else {@code fallback}.
   */
  Duration budget(Duration fallback) {
    if (timeout == null) {
      return fallback;
    }
    Duration margin = timeout.dividedBy(5);
    if (margin.compareTo(PRINT_MARGIN) > 0) {
      margin = PRINT_MARGIN;
    }
    // Whole milliseconds, as every duration the verbs report is (a 1 ms timeout leaves 0 ms).
    return Duration.ofMillis(timeout.minus(margin).toMillis());
  }

  /** The {@code --timeout} of {@code command}, if it has this option and it was given. */
  static Optional<Duration> of(CommandSpec command) {
    return command.mixins().values().stream()
        .map(CommandSpec::userObject)
        .filter(TimeoutOption.class::isInstance)
        .map(TimeoutOption.class::cast)
        .findFirst()
        .flatMap(TimeoutOption::timeout);
  }
}
