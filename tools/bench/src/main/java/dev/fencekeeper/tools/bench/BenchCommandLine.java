package dev.fencekeeper.tools.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** {@code bench}'s options as a command line, for the report's method. */
final class BenchCommandLine {
  private BenchCommandLine() {}

  /** The command as it would be typed again, for the document's header. */
  static String of(BenchOptions options) {
    List<String> parts =
        new ArrayList<>(
            List.of(
                "./fencekeeper",
                "bench",
                "--workload",
                options.workloads,
                "--concurrency",
                options.concurrency,
                "--duration",
                options.timing.duration.toMillis() % 1000 == 0
                    ? options.timing.duration.toSeconds() + "s"
                    : options.timing.duration.toMillis() + "ms",
                "--warmup",
                options.timing.warmup.toMillis() % 1000 == 0
                    ? options.timing.warmup.toSeconds() + "s"
                    : options.timing.warmup.toMillis() + "ms"));
    if (!options.jitWarmup.equals(Duration.ofSeconds(BenchOptions.DEFAULT_JIT_WARMUP_SECONDS))) {
      parts.addAll(
          List.of(
              "--jit-warmup",
              options.jitWarmup.toMillis() % 1000 == 0
                  ? options.jitWarmup.toSeconds() + "s"
                  : options.jitWarmup.toMillis() + "ms"));
    }
    if (!options.phases.equals("settled")) {
      parts.addAll(
          List.of("--phases", options.phases, "--cold-warmup", seconds(options.coldWarmup)));
    }
    if (options.clients != 1) {
      parts.addAll(List.of("--clients", Integer.toString(options.clients)));
    }
    if (options.failoverTrials != 3) {
      parts.addAll(List.of("--failover-trials", Integer.toString(options.failoverTrials)));
    }
    if (options.baseline != null) {
      parts.addAll(List.of("--baseline", options.baseline));
    }
    if (options.endpoints != null) {
      parts.addAll(List.of("--endpoints", options.endpoints));
    }
    if (options.peers != null) {
      parts.addAll(List.of("--peers", options.peers));
    }
    if (options.stateKeys > 0) {
      parts.addAll(List.of("--state-keys", Integer.toString(options.stateKeys)));
    }
    if (options.snapshotLoad) {
      parts.add("--snapshot-load");
    }
    if (options.snapshotEvery != null) {
      parts.addAll(List.of("--snapshot-every", Long.toString(options.snapshotEvery)));
    }
    if (!options.api.equals(ClientApi.DEFAULT_NAMES)) {
      parts.addAll(List.of("--api", options.api));
    }
    if (options.nodeW2) {
      parts.add("--node-w2");
    }
    if (options.nodeClient != null) {
      parts.addAll(List.of("--node-client", options.nodeClient.toString()));
    }
    if (options.manyLeases > 0) {
      parts.addAll(List.of("--many-leases", Integer.toString(options.manyLeases)));
    }
    if (options.costCurve) {
      parts.addAll(
          List.of(
              "--cost-curve",
              "--cost-curve-workers",
              options.costCurveWorkers,
              "--cost-curve-keys",
              options.costCurveKeys));
    }
    if (options.output != null) {
      parts.addAll(List.of("--output", options.output.toString()));
    }
    return String.join(" ", parts);
  }

  private static String seconds(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
  }
}
