package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad drill invocations are usage errors that start nothing and say what to do instead. */
class DrillUsageTest {
  @TempDir Path dir;

  // Guarantee: an unknown drill name exits 2 and lists the drills there are.
  @Test
  void anUnknownDrillIsAUsageErrorListingTheDrills() {
    CliRun run = CliRun.run(dir, "drill", "meteor-strike");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err())
        .contains("no drill 'meteor-strike'")
        .contains("stale-writer", "leader-kill", "partition");
  }

  // Guarantee: a drill that must kill or rewire nodes refuses a cluster it did not start, named
  // either way.
  @Test
  void aNodeFaultDrillRefusesAnExternalCluster() {
    CliRun run =
        CliRun.run(
            dir, "drill", "leader-kill", "--endpoints", "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("needs its own cluster").contains("stale-writer");

    CliRun deprecated =
        CliRun.run(dir, "drill", "leader-kill", "--peers", "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3");
    assertThat(deprecated.exitCode()).isEqualTo(2);
    assertThat(deprecated.err())
        .contains("--peers (Raft addresses) is deprecated")
        .contains("needs its own cluster");
  }

  // Guarantee: a Raft address given where the running cluster's client endpoints belong is
  // refused at once, naming the client port to give.
  @Test
  void aRaftAddressInEndpointsIsRefusedWithTheClientPort() {
    CliRun run = CliRun.run(dir, "drill", "stale-writer", "--endpoints", "n1@127.0.0.1:7301");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("--endpoints").contains("7501");
  }

  // Guarantee: the verb is listed in the top-level help.
  @Test
  void helpListsTheDrillVerb() {
    assertThat(CliRun.run(dir, "--help").out()).contains("drill");
  }
}
