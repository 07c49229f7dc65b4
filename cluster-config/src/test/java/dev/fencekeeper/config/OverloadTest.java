package dev.fencekeeper.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class OverloadTest {

  // The defaults are the keys' documented defaults, and a config without overload keys has them.
  @Test
  void defaultsAreTheKeysDefaults() {
    assertThat(Overload.defaults()).isEqualTo(new Overload(4096, 4096));
    assertThat(ClusterConfig.localDefaults().overload()).isEqualTo(Overload.defaults());
  }

  // Bounds built in code are checked under their config key, as a file's would be.
  @Test
  void rejectsNonPositiveBoundsNamingTheKey() {
    assertThatThrownBy(() -> new Overload(0, 1))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("overload.pending-writes.max")
        .hasMessageContaining("'0'");
    assertThatThrownBy(() -> Overload.defaults().withMaxPendingReads(-3))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("overload.pending-reads.max")
        .hasMessageContaining("'-3'");
  }

  // withOverload changes only the two keys and survives a properties round trip.
  @Test
  void withOverloadRoundTrips() {
    ClusterConfig c =
        ClusterConfig.localDefaults()
            .withOverload(Overload.defaults().withMaxPendingWrites(12).withMaxPendingReads(34));
    assertThat(c.overload()).isEqualTo(new Overload(12, 34));
    assertThat(c.toProperties().getProperty("overload.pending-writes.max")).isEqualTo("12");
    assertThat(c.toProperties().getProperty("overload.pending-reads.max")).isEqualTo("34");
    assertThat(ClusterConfig.fromProperties(c.toProperties())).isEqualTo(c);
    assertThat(c.withOverload(Overload.defaults())).isEqualTo(ClusterConfig.localDefaults());
  }
}
