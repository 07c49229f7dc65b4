package dev.fencekeeper.tools;

import dev.fencekeeper.client.AcquireOptions;
import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * The flags every verb that takes a lease shares: how long, for whom, how long to wait, lock-delay.
 */
final class AcquireFlags {
  @Option(
      names = "--ttl",
      required = true,
      paramLabel = "DURATION",
      converter = DurationConverter.class,
      description = "Lease time to live, e.g. 500ms, 5s, 2m.")
  Duration ttl;

  @Option(
      names = "--owner",
      paramLabel = "NAME",
      description = "Owner label shown to others (diagnostics only). Default: your user name.")
  private String owner;

  @Option(
      names = "--wait",
      paramLabel = "DURATION",
      converter = DurationConverter.class,
      description =
          "Wait up to this long for the resource, in line behind earlier waiters, e.g. 10s.")
  Duration wait;

  @Option(
      names = "--lock-delay",
      paramLabel = "DURATION",
      converter = DurationConverter.class,
      description =
          "After this lease ends involuntarily (expiry, revoke), nobody may acquire for this long.")
  private Duration lockDelay;

  boolean waits() {
    return wait != null && !wait.isZero();
  }

  AcquireOptions options(String requestId) {
    String label = owner != null ? owner : System.getProperty("user.name", "cli");
    return AcquireOptions.defaults().owner(label).requestId(requestId).lockDelay(lockDelay);
  }
}
