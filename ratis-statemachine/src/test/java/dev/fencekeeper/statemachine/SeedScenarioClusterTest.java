package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.client.WriteResult;
import dev.fencekeeper.testing.TestCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The paused-worker timeline of the README, on three real Ratis nodes. */
@Timeout(120)
class SeedScenarioClusterTest {
  @TempDir static Path dataDir;
  static TestCluster cluster;
  static FencingClient workerA;
  static FencingClient workerB;

  @BeforeAll
  static void startCluster() {
    cluster = TestCluster.start(dataDir);
    cluster.awaitLeader();
    workerA = cluster.newClient("worker-a");
    workerB = cluster.newClient("worker-b");
  }

  @AfterAll
  static void stopCluster() {
    cluster.close();
  }

  // Guarantee: once B holds a newer token, A's write with its expired token is rejected with B's
  // token, and B's value stays.
  @Test
  void staleWriterIsRejectedAfterTheNewHolderWrites() {
    Result a = workerA.acquireToken("daily-sales-report", Duration.ofMillis(300), "worker-a");
    assertThat(a.code()).as(a.toString()).isEqualTo(ResultCode.GRANTED);

    Result b = awaitGrant(workerB, "daily-sales-report", "worker-b");
    assertThat(b.token()).isGreaterThan(a.token());

    WriteResult bWrite =
        workerB.write("daily-sales-report", b.token(), "2026-11-29", bytes("B's report"));
    assertThat(bWrite.code()).isEqualTo(ResultCode.ACCEPTED);

    WriteResult aWrite =
        workerA.write("daily-sales-report", a.token(), "2026-11-29", bytes("A's report"));
    assertThat(aWrite.code()).isEqualTo(ResultCode.STALE_TOKEN);
    assertThat(aWrite.currentToken()).isEqualTo(b.token());
    assertThat(aWrite.sentToken()).isEqualTo(a.token());
    assertThat(aWrite.holderOwner()).isEqualTo("worker-b");

    assertThat(workerA.read("daily-sales-report", "2026-11-29").valueAsString())
        .isEqualTo("B's report");
  }

  // Guarantee: A is fenced off as soon as B acquires, before B has written anything.
  @Test
  void staleWriterIsRejectedRightAfterTheNewGrant() {
    Result a = workerA.acquireToken("inventory-42", Duration.ofMillis(300), "worker-a");
    assertThat(a.code()).as(a.toString()).isEqualTo(ResultCode.GRANTED);
    Result b = awaitGrant(workerB, "inventory-42", "worker-b");

    WriteResult aWrite = workerA.write("inventory-42", a.token(), "count", bytes("7"));
    assertThat(aWrite.code()).isEqualTo(ResultCode.STALE_TOKEN);
    assertThat(aWrite.currentToken()).isEqualTo(b.token());
    assertThat(workerB.read("inventory-42", "count").isFound()).isFalse();
  }

  private static Result awaitGrant(FencingClient client, String resource, String owner) {
    return await()
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(50))
        .until(
            () -> client.acquireToken(resource, Duration.ofSeconds(10), owner),
            r -> r.code() == ResultCode.GRANTED);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
