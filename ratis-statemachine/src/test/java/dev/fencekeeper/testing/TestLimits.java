package dev.fencekeeper.testing;

import dev.fencekeeper.config.Limits;
import java.time.Duration;

/** Limits for tests that drive the core directly. */
public final class TestLimits {
  /**
   * Small enough for a table test to reach each bound with a few bytes: TTL 100 ms .. 60 s, grace 2
   * s, 256 B resource, 512 B key, 128 B owner, 1 KiB value, 4 keys per write, 64 B request id, 8
   * request ids per lease; the others at their defaults.
   */
  public static final Limits SMALL =
      Limits.builder()
          .minTtl(Duration.ofMillis(100))
          .maxTtl(Duration.ofSeconds(60))
          .takeoverGrace(Duration.ofSeconds(2))
          .maxResourceBytes(256)
          .maxKeyBytes(512)
          .maxOwnerBytes(128)
          .maxValueBytes(1024)
          .maxKeysPerWrite(4)
          .maxRequestIdBytes(64)
          .maxRequestIdsPerLease(8)
          .build();

  private TestLimits() {}
}
