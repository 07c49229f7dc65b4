package dev.fencekeeper.tools.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencekeeper.config.ConfigException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --baseline}'s names and the check that an anchor's package is installed; neither needs the
 * packages.
 */
class AnchorOptionsTest {
  @TempDir Path dir;

  // Guarantee: an unknown name is refused before anything starts, naming it and the known ones.
  @Test
  void unknownBaselineIsRefusedNamingTheKnownOnes() {
    assertThatThrownBy(() -> AnchorRun.parse("ratis,mysql"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "--baseline: 'mysql' is not known; choose from ratis, zookeeper, zookeeper-curator,"
                + " etcd (comma-separated)");
    assertThatThrownBy(() -> AnchorRun.parse("ratis,"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("'' is not known");
    assertThat(AnchorRun.parse(" ratis , ratis")).containsExactly("ratis");
  }

  // Guarantee: a missing package is refused with the apt-get line that installs it.
  @Test
  void missingPackageSaysHowToInstallIt() {
    Path absent = dir.resolve("zookeeper.jar");
    assertThatThrownBy(() -> Anchor.Kind.ZOOKEEPER.requireInstalled(absent))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "--baseline zookeeper needs ZooKeeper 3.8 from the Debian package `zookeeper` ("
                + absent
                + " is missing): install it with `apt-get install zookeeper`");
    assertThatThrownBy(() -> Anchor.Kind.ETCD.requireInstalled(dir.resolve("etcd")))
        .hasMessageContaining("install it with `apt-get install etcd-server`");
  }
}
