package dev.fencekeeper.tools.bench;

import dev.fencekeeper.tools.DurationConverter;
import java.time.Duration;
import picocli.CommandLine.Option;

/** The bench commands' shared options: the measured window and the unmeasured load before it. */
final class MeasureWindow {
  @Option(
      names = "--duration",
      paramLabel = "DURATION",
      defaultValue = "10s",
      converter = DurationConverter.class,
      description = "Measured time per workload and worker count (default: ${DEFAULT-VALUE}).")
  Duration duration;

  @Option(
      names = "--warmup",
      paramLabel = "DURATION",
      defaultValue = "3s",
      converter = DurationConverter.ZeroAllowed.class,
      description = "Unmeasured load before measuring (default: ${DEFAULT-VALUE}).")
  Duration warmup;
}
