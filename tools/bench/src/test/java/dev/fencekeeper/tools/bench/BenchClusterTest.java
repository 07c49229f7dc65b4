package dev.fencekeeper.tools.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.tools.LocalClusterLayout;
import dev.fencekeeper.tools.LocalClusterLayout.Node;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BenchClusterTest {
  @TempDir Path dir;

  // Guarantee: a bench cluster's node settings reach each node's config file, the rest of the file
  // unchanged; an invalid setting is refused naming its key and leaves the file as it was.
  @Test
  void nodeSettingsReachTheConfigFile() throws Exception {
    Node node = LocalClusterLayout.prepare(dir, 27301).get(0);
    ClusterConfig before = ClusterConfig.load(node.configFile());

    BenchCluster.applySettings(node, Map.of("snapshot.auto-trigger.entries", "1234"));

    ClusterConfig after = ClusterConfig.load(node.configFile());
    assertThat(after.snapshotAutoTriggerEntries()).isEqualTo(1234);
    assertThat(after.nodeId()).isEqualTo(before.nodeId());
    assertThat(after.peers()).isEqualTo(before.peers());
    assertThat(after.storageDir()).isEqualTo(before.storageDir());

    String written = Files.readString(node.configFile());
    assertThatThrownBy(
            () -> BenchCluster.applySettings(node, Map.of("snapshot.auto-trigger.entries", "0")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("snapshot.auto-trigger.entries");
    assertThat(Files.readString(node.configFile())).isEqualTo(written);
  }
}
