package dev.fencekeeper.server.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.config.LocalPorts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The process flavour of {@link LocalCluster}: one JVM per node. */
class LocalClusterProcessTest {
  private static final List<String> SMALL_JVM = List.of("-Xmx128m", "-XX:TieredStopAtLevel=1");

  @TempDir Path dir;

  private static NodeCommand command(Class<?> main) {
    return NodeCommand.onThisClassPath(main.getName(), SMALL_JVM);
  }

  // Guarantee: each node runs in a process of its own from its config file, its output in its log
  // file, and the nodes elect a leader; a stopped node's process is gone and its ports are free.
  @Test
  void startsElectsAndStopsOneNode() throws Exception {
    try (LocalCluster cluster =
        LocalCluster.builder(dir).processes(command(TestNodeMain.class)).start()) {
      String leader = cluster.awaitLeader(Duration.ofSeconds(90));

      List<Long> pids = new ArrayList<>();
      for (String id : cluster.nodeIds()) {
        long pid = cluster.pid(id).orElseThrow();
        assertThat(pid).isNotEqualTo(ProcessHandle.current().pid());
        pids.add(pid);
        assertThat(cluster.configFile(id)).isEqualTo(dir.resolve(id + ".properties")).exists();
        await()
            .atMost(Duration.ofSeconds(60))
            .untilAsserted(
                () ->
                    assertThat(Files.readString(cluster.logFile(id)))
                        .contains("node " + id + " serving"));
      }
      assertThat(pids).doesNotHaveDuplicates();

      long pid = cluster.pid(leader).orElseThrow();
      int raftPort = cluster.nodeConfig(leader).self().port();
      cluster.stop(leader);

      assertThat(ProcessHandle.of(pid).filter(ProcessHandle::isAlive)).isEmpty();
      assertThat(cluster.isRunning(leader)).isFalse();
      assertThat(cluster.pid(leader)).isEmpty();
      assertThat(LocalPorts.isFree(raftPort)).isTrue();
      assertThat(cluster.awaitLeader(Duration.ofSeconds(60))).isNotEqualTo(leader);
    }
  }

  // Guarantee: close stops every node, also one that ignores SIGTERM (it is killed once the grace
  // is over), and the others are not left running because of it.
  @Test
  void closeStopsEveryNodeWhenOneIgnoresSigterm() {
    LocalCluster cluster =
        LocalCluster.builder(dir)
            .processes(
                id ->
                    command(
                        id.equals("n1") ? TestNodeMain.IgnoringSigterm.class : TestNodeMain.class))
            .stopGrace(Duration.ofSeconds(1))
            .start();
    List<ProcessHandle> nodes = new ArrayList<>();
    for (String id : cluster.nodeIds()) {
      nodes.add(ProcessHandle.of(cluster.pid(id).orElseThrow()).orElseThrow());
    }
    try {
      cluster.awaitLeader(Duration.ofSeconds(90));

      cluster.close();

      assertThat(nodes).noneMatch(ProcessHandle::isAlive);
      assertThat(cluster.runningIds()).isEmpty();
    } finally {
      nodes.forEach(ProcessHandle::destroyForcibly);
    }
  }

  // Guarantee: a node that exits by itself is reported as not running, with its exit code.
  @Test
  void reportsANodeThatExitedByItself() throws Exception {
    try (LocalCluster cluster =
        LocalCluster.builder(dir).nodes(1).processes(command(TestNodeMain.class)).start()) {
      Process process = cluster.process("n1").orElseThrow();
      Optional<ProcessHandle> handle = ProcessHandle.of(process.pid());
      handle.orElseThrow().destroyForcibly();
      process.waitFor();

      assertThat(cluster.isRunning("n1")).isFalse();
      assertThat(cluster.exitCode("n1")).hasValue(137);
    }
  }
}
