package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.config.PropertyNames;
import dev.fencekeeper.server.FencekeeperServer;
import dev.fencekeeper.server.RaftConfig;
import dev.fencekeeper.server.local.LocalCluster;
import dev.fencekeeper.server.local.NodeCommand;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.Properties;
import org.apache.ratis.server.RaftServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/** A node's start and clean stop are in its log, and a clean stop logs no warning. */
@Timeout(300)
class CleanShutdownLogTest {
  @TempDir Path dir;

  // Guarantee: a node that starts, leads, serves a call and is closed logs its start ("serving
  // on") and its stop ("stopping", "stopped"), and nothing at WARN or above from anyone, Ratis
  // included, while it stops.
  @Test
  void aCleanStopIsLoggedAndWarnsOfNothing() throws Exception {
    Logger root = (Logger) LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME);
    Logger ratis = (Logger) LoggerFactory.getLogger("org.apache.ratis");
    Level ratisLevel = ratis.getLevel();
    ListAppender<ILoggingEvent> log = new ListAppender<>();
    log.start();
    root.addAppender(log);
    // As a node runs (fencekeeper-logback-base.xml): Ratis's warnings are shown.
    ratis.setLevel(Level.WARN);
    try {
      int port = LocalPorts.freeNodePort();
      Properties p = new Properties();
      p.setProperty("peers", "n1@127.0.0.1:" + port);
      p.setProperty("node.id", "n1");
      p.setProperty("storage.dir", dir.resolve("n1").toString());
      // A group of its own: a Raft division of another test's cluster still stopping in this JVM
      // logs under its own group's name and is not this node's stop.
      p.setProperty(PropertyNames.CLUSTER_NAME, "clean-shutdown-" + port);
      ClusterConfig config = ClusterConfig.fromProperties(p);
      String division = "n1@" + RaftConfig.groupId(config);
      FencekeeperServer server = FencekeeperServer.start(config);
      await().atMost(Duration.ofSeconds(60)).until(() -> leads(server));
      int before = log.list.size();
      server.close();
      Thread.sleep(500); // what closing threads still log
      List<ILoggingEvent> stopping = List.copyOf(log.list.subList(before, log.list.size()));
      assertThat(messages(log.list)).anyMatch(m -> m.contains("fencekeeper node n1 serving on"));
      assertThat(messages(stopping))
          .anyMatch(m -> m.equals("fencekeeper node n1 stopping"))
          .anyMatch(m -> m.equals("fencekeeper node n1 stopped"));
      assertThat(stopping)
          .filteredOn(e -> e.getLevel().isGreaterOrEqual(Level.WARN))
          .filteredOn(e -> isOfThisNode(e, division))
          .extracting(e -> e.getLoggerName() + ": " + e.getFormattedMessage())
          .isEmpty();
    } finally {
      root.detachAppender(log);
      ratis.setLevel(ratisLevel);
    }
  }

  /**
   * Whether {@code event} may come from the node under test: anything that does not name a Raft
   * division, or names this node's ({@code n1@group-…}) in its thread or message.
   */
  private static boolean isOfThisNode(ILoggingEvent event, String division) {
    String text = event.getThreadName() + " " + event.getFormattedMessage();
    return !text.contains("@group-") || text.contains(division);
  }

  // Guarantee: in a cluster of three node processes (`fencekeeper server`, as deployed, with its
  // own logging configuration), a follower, then the leader, then the last node stopped by SIGTERM
  // each exit 0 and write, from the moment they are asked to stop, "stopped" and no WARN or ERROR
  // line and no stack trace to their log; the only warnings allowed are a leader's about a peer
  // stopped before (Ratis's appender reporting a follower that is gone).
  @Test
  void nodesOfAClusterStopWithoutWarnings() throws Exception {
    NodeCommand server = NodeProcesses.nodeCommand(List.of("server"));
    List<String> flags = new ArrayList<>(server.jvmFlags());
    // The deployed logging configuration, not this module's logback-test.xml, which is on the
    // class path the nodes share with this JVM.
    flags.add("-Dlogback.configurationFile=logback.xml");
    NodeCommand asDeployed =
        new NodeCommand(
            server.prefix(),
            server.java(),
            flags,
            server.classPath(),
            server.mainClass(),
            server.verb());
    try (LocalCluster cluster =
        LocalCluster.builder(dir.resolve("cluster")).processes(asDeployed).start()) {
      // Three JVMs starting on a busy machine.
      String leader = cluster.awaitLeader(Duration.ofSeconds(150));
      try (FencingClient client = FencingClient.connect(cluster.config(), "writer")) {
        // The leader just elected may not serve yet.
        Result grant =
            await()
                .atMost(Duration.ofSeconds(60))
                .until(
                    () -> client.acquireToken("stop", Duration.ofMinutes(1), "writer"),
                    r -> r.code() == ResultCode.GRANTED);
        for (int i = 0; i < 20; i++) {
          Result written = client.write("stop", grant.token(), "k" + i, new byte[] {1});
          assertThat(written.code()).as(written.toString()).isEqualTo(ResultCode.ACCEPTED);
        }
      }
      List<String> order = new ArrayList<>();
      cluster.nodeIds().stream().filter(id -> !id.equals(leader)).forEach(order::add);
      order.add(1, leader);
      List<String> stopped = new ArrayList<>();
      for (String id : order) {
        long from = Files.size(cluster.logFile(id));
        OptionalInt exit = cluster.stop(id, Duration.ofSeconds(30));
        assertThat(exit).as(id + " exit code").hasValue(0);
        String written;
        try (var in = Files.newInputStream(cluster.logFile(id))) {
          in.skipNBytes(from);
          written = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertThat(written).as(id).contains("fencekeeper node " + id + " stopped");
        assertThat(events(written))
            .as("what %s logged while it stopped", id)
            .filteredOn(event -> !aboutAPeerStoppedBefore(event, stopped))
            .flatMap(event -> event.lines().toList())
            .noneMatch(
                line ->
                    line.contains(" WARN ")
                        || line.contains(" ERROR ")
                        || line.startsWith("\tat ")
                        || line.contains("Exception"));
        stopped.add(id);
      }
    }
  }

  private static final java.util.regex.Pattern EVENT_START =
      java.util.regex.Pattern.compile("^(\\d{4}-\\d{2}-\\d{2}T)?\\d{2}:\\d{2}:\\d{2}\\.\\d{3}");

  /**
   * The log's events: a line that starts with a time stamp and the lines that follow it without one
   * (a stack trace, its causes), so that an allowed event is allowed with its causes.
   */
  private static List<String> events(String log) {
    List<String> events = new ArrayList<>();
    for (String line : log.split("\n")) {
      if (events.isEmpty() || EVENT_START.matcher(line).find()) {
        events.add(line);
      } else {
        events.set(events.size() - 1, events.get(events.size() - 1) + "\n" + line);
      }
    }
    return events;
  }

  /** A leader's log appender reporting a follower that stopped before (it logs "->n1-"). */
  private static boolean aboutAPeerStoppedBefore(String line, List<String> stopped) {
    return line.contains("GrpcLogAppender")
        && stopped.stream().anyMatch(id -> line.contains("->" + id + "-"));
  }

  private static List<String> messages(List<ILoggingEvent> events) {
    return events.stream().map(ILoggingEvent::getFormattedMessage).toList();
  }

  private static boolean leads(FencekeeperServer server) {
    try {
      RaftServer.Division d = server.raftServer().getDivision(RaftConfig.groupId(server.config()));
      return d.getInfo().isLeader() && d.getInfo().isLeaderReady();
    } catch (IOException e) {
      return false;
    }
  }
}
