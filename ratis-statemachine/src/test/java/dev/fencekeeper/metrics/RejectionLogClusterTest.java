package dev.fencekeeper.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.client.WriteResult;
import dev.fencekeeper.core.Command;
import dev.fencekeeper.testing.TestCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/** The structured line each rejected write leaves in the node logs. */
@Timeout(120)
class RejectionLogClusterTest {
  @TempDir Path dataDir;

  private final ListAppender<ILoggingEvent> lines = new ListAppender<>();
  private Logger logger;

  @BeforeEach
  void capture() {
    logger = (Logger) LoggerFactory.getLogger(RejectionLog.LOGGER);
    lines.start();
    logger.addAppender(lines);
  }

  @AfterEach
  void release() {
    logger.detachAppender(lines);
  }

  // Guarantee: a stale write (STALE_TOKEN) and one with an ended lease (LEASE_EXPIRED), both
  // rejected in apply on every replica, each leave exactly one line across the three nodes (the
  // leader's), naming resource, key, sent and current token, holder, code.
  @Test
  void eachRejectedWriteIsLoggedOnceByTheLeader() {
    try (TestCluster cluster = TestCluster.start(dataDir)) {
      cluster.awaitLeader();
      FencingClient client = cluster.newClient("tests");

      long a = client.acquireToken("report", Duration.ofMillis(300), "worker-a").token();
      awaitNoLiveLease(client, "report");
      long b = client.acquireToken("report", Duration.ofSeconds(30), "worker-b").token();
      WriteResult stale = client.write("report", a, "2026-11-29", bytes("late"));
      assertThat(stale.code()).isEqualTo(ResultCode.STALE_TOKEN);
      assertThat(settledLines(cluster))
          .containsExactly(
              "write rejected resource=report key=2026-11-29 sentToken="
                  + a
                  + " currentToken="
                  + b
                  + " holderOwner=worker-b code=STALE_TOKEN");

      lines.list.clear();
      long c = client.acquireToken("night job", Duration.ofMillis(300), "worker c").token();
      awaitNoLiveLease(client, "night job");
      WriteResult expired = client.write("night job", c, "out put", bytes("late"));
      assertThat(expired.code()).isEqualTo(ResultCode.LEASE_EXPIRED);
      assertThat(settledLines(cluster))
          .containsExactly(
              "write rejected resource=\"night job\" key=\"out put\" sentToken="
                  + c
                  + " currentToken="
                  + c
                  + " holderOwner=\"\" code=LEASE_EXPIRED");
    }
  }

  // Guarantee: values that are empty or hold blanks, quotes, '=' or line breaks are quoted and
  // escaped, and long ones cut short, so one rejection is always one parseable line.
  @Test
  void valuesAreQuotedSoEachRejectionStaysOneLine() {
    assertThat(RejectionLog.value("daily-sales-report")).isEqualTo("daily-sales-report");
    assertThat(RejectionLog.value("")).isEqualTo("\"\"");
    assertThat(RejectionLog.value("a b")).isEqualTo("\"a b\"");
    assertThat(RejectionLog.value("k=v")).isEqualTo("\"k=v\"");
    assertThat(RejectionLog.value("say \"hi\"\n\\")).isEqualTo("\"say \\\"hi\\\"\\n\\\\\"");
    assertThat(RejectionLog.value("x".repeat(400)))
        .isEqualTo("\"" + "x".repeat(RejectionLog.MAX_VALUE_CHARS) + "...(400 chars)\"");
    Command.Write twoKeys =
        new Command.Write(
            "r",
            7,
            List.of(Command.KeyWrite.put("k1", bytes("v")), Command.KeyWrite.put("k2", bytes("v"))),
            null);
    assertThat(RejectionLog.line(twoKeys, "STALE_TOKEN", 0, 9, "w", ""))
        .isEqualTo(
            "write rejected resource=r key=k1,k2 sentToken=7 currentToken=9 holderOwner=w"
                + " code=STALE_TOKEN");
  }

  /** The lines logged once every node has applied everything: later lines would be duplicates. */
  private List<String> settledLines(TestCluster cluster) {
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(50))
        .until(
            () -> {
              long leaderApplied = cluster.lastApplied(cluster.awaitLeader());
              return cluster.running().keySet().stream()
                  .allMatch(id -> cluster.lastApplied(id) >= leaderApplied);
            });
    return lines.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
  }

  private static void awaitNoLiveLease(FencingClient client, String resource) {
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(50))
        .until(
            () -> {
              Result lease = client.lease(resource);
              return !lease.live();
            });
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
