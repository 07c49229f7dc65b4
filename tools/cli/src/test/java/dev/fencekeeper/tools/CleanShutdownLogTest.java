package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.server.FencekeeperServer;
import dev.fencekeeper.server.RaftConfig;
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
      FencekeeperServer server = FencekeeperServer.start(ClusterConfig.fromProperties(p));
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
          .extracting(e -> e.getLoggerName() + ": " + e.getFormattedMessage())
          .isEmpty();
    } finally {
      root.detachAppender(log);
      ratis.setLevel(ratisLevel);
    }
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
