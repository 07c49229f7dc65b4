package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.config.PropertyNames;
import dev.fencekeeper.server.FencekeeperServer;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.apache.ratis.server.RaftServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/** A node's start and clean stop are in its log, and a clean stop logs no warning. */
@Timeout(120)
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
      String division = "n1@" + config.groupId();
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

  private static List<String> messages(List<ILoggingEvent> events) {
    return events.stream().map(ILoggingEvent::getFormattedMessage).toList();
  }

  private static boolean leads(FencekeeperServer server) {
    try {
      RaftServer.Division d = server.raftServer().getDivision(server.config().groupId());
      return d.getInfo().isLeader() && d.getInfo().isLeaderReady();
    } catch (IOException e) {
      return false;
    }
  }
}
