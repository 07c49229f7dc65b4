package dev.fencekeeper.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class LimitsTest {

  // The defaults are the documented values other modules rely on.
  @Test
  void defaultsAreTheDocumentedValues() {
    Limits limits = Limits.defaults();

    assertThat(limits.minTtl()).isEqualTo(Duration.ofMillis(100));
    assertThat(limits.maxTtl()).isEqualTo(Duration.ofHours(1));
    assertThat(limits.takeoverGrace()).isEqualTo(Duration.ofSeconds(2));
    assertThat(limits.maxResourceBytes()).isEqualTo(256);
    assertThat(limits.maxKeyBytes()).isEqualTo(512);
    assertThat(limits.maxOwnerBytes()).isEqualTo(256);
    assertThat(limits.maxValueBytes()).isEqualTo(1_048_576);
    assertThat(limits.maxKeysPerWrite()).isEqualTo(64);
    assertThat(limits.maxRequestIdBytes()).isEqualTo(128);
    assertThat(limits.maxRequestIdsPerLease()).isEqualTo(1024);
  }

  // minTtl above maxTtl is refused, naming the key and both values.
  @Test
  void rejectsMinTtlAboveMax() {
    assertThatThrownBy(
            () ->
                Limits.builder()
                    .minTtl(Duration.ofSeconds(5))
                    .maxTtl(Duration.ofSeconds(1))
                    .build())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("lease.ttl.min")
        .hasMessageContaining("'5s'")
        .hasMessageContaining("'1s'");
  }

  // Zero or negative sizes and counts are refused under their config key.
  @Test
  void rejectsNonPositiveNumbers() {
    assertThatThrownBy(() -> Limits.builder().maxValueBytes(0).build())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("limits.value.max-bytes")
        .hasMessageContaining("'0'");
    assertThatThrownBy(() -> Limits.builder().maxRequestIdsPerLease(-5).build())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("limits.request-ids-per-lease.max")
        .hasMessageContaining("'-5'");
  }

  // Durations must be positive whole milliseconds, so every Limits can be stored and read back.
  @Test
  void rejectsDurationsAFileCouldNotHold() {
    assertThatThrownBy(() -> Limits.builder().minTtl(Duration.ZERO).build())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("lease.ttl.min")
        .hasMessageContaining("'0ms'");
    assertThatThrownBy(() -> Limits.builder().takeoverGrace(Duration.ofNanos(1_500_000)).build())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("lease.takeover-grace");
    assertThatThrownBy(() -> Limits.builder().maxTtl(null).build())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("lease.ttl.max");
  }

  // The builder starts from the defaults, sets each limit by name, and checks as the constructor
  // does.
  @Test
  void builderStartsFromTheDefaultsAndChecksLikeTheConstructor() {
    assertThat(Limits.builder().build()).isEqualTo(Limits.defaults());

    Limits set =
        Limits.builder()
            .minTtl(Duration.ofMillis(200))
            .maxValueBytes(1024)
            .maxWaitersPerResource(16)
            .maxRequestsPerBatch(8)
            .build();
    assertThat(set.minTtl()).isEqualTo(Duration.ofMillis(200));
    assertThat(set.maxValueBytes()).isEqualTo(1024);
    assertThat(set.maxWaitersPerResource()).isEqualTo(16);
    assertThat(set.maxRequestsPerBatch()).isEqualTo(8);
    assertThat(set.maxTtl()).isEqualTo(Limits.defaults().maxTtl());
    assertThat(set.toBuilder().build()).isEqualTo(set);
    assertThat(set.withMaxResources(3)).isEqualTo(set.toBuilder().maxResources(3).build());

    assertThatThrownBy(() -> Limits.builder().maxKeysPerWrite(0).build())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("limits.keys-per-write.max")
        .hasMessageContaining("'0'");
    assertThatThrownBy(
            () ->
                Limits.builder()
                    .minTtl(Duration.ofSeconds(5))
                    .maxTtl(Duration.ofSeconds(1))
                    .build())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("lease.ttl.min");
  }
}
