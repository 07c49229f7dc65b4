package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.client.WriteResult;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client that knows only the peers learns the cluster's limits from the cluster: it refuses what
 * is too big before sending it, and builds no batch the cluster would refuse.
 */
@Timeout(120)
class ServerLimitsClientClusterTest {
  private static final int VALUE_LIMIT = 1_000;

  @TempDir Path dataDir;
  TestCluster cluster;
  FencingClient client;

  @BeforeEach
  void startCluster() {
    Properties p = new Properties();
    p.setProperty("limits.value.max-bytes", Integer.toString(VALUE_LIMIT));
    cluster = TestCluster.start(dataDir, p);
    cluster.awaitLeader();
    // Only the peers: this client's own copy of the limits is the defaults, far above the
    // cluster's.
    String peers =
        cluster.config().peers().stream()
            .map(PeerAddress::toString)
            .collect(Collectors.joining(","));
    client =
        FencingClient.builder()
            .peers(peers)
            .clusterName(cluster.config().clusterName())
            .owner("limits")
            .build();
  }

  @AfterEach
  void stopCluster() {
    client.close();
    cluster.close();
  }

  // Guarantee: a value over the cluster's limit is refused as INVALID_ARGUMENT naming the limit,
  // and nothing is sent for it.
  @Test
  void tooBigAValueIsRefusedBeforeItIsSent() {
    try (Lease lease = client.acquire("big", Duration.ofSeconds(30))) {
      WriteResult r = lease.write("k", new byte[VALUE_LIMIT + 1]);
      assertThat(r.code()).isEqualTo(ResultCode.INVALID_ARGUMENT);
      assertThat(r.message())
          .contains("limits.value.max-bytes")
          .contains(Integer.toString(VALUE_LIMIT))
          .contains("nothing was sent");
      assertThat(
              client
                  .metrics()
                  .registry()
                  .timer("fencekeeper.client.request.WRITE.seconds")
                  .getCount())
          .isZero();
      assertThat(lease.write("k", new byte[VALUE_LIMIT]).isAccepted()).isTrue();
    }
  }

  // Guarantee: 100 MB is INVALID_ARGUMENT at once, not UNAVAILABLE after the call timeout.
  @Test
  void aHundredMegabytesIsInvalidNotUnavailable() {
    try (Lease lease = client.acquire("huge", Duration.ofSeconds(30))) {
      long start = System.nanoTime();
      WriteResult r = lease.write("k", new byte[100 * 1024 * 1024]);
      assertThat(r.code()).isEqualTo(ResultCode.INVALID_ARGUMENT);
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    }
  }

  // Guarantee: concurrent writes that each fit are never coalesced into a batch over the cluster's
  // limit (which the cluster would refuse whole): every one is accepted.
  @Test
  void batchesAreSizedByTheClustersLimit() {
    List<Lease> leases = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      leases.add(client.acquire("batch-" + i, Duration.ofSeconds(30)));
    }
    for (int round = 0; round < 5; round++) {
      List<CompletableFuture<WriteResult>> writes = new ArrayList<>();
      for (Lease lease : leases) {
        writes.add(lease.writeAsync("k", new byte[VALUE_LIMIT * 6 / 10]));
      }
      for (CompletableFuture<WriteResult> w : writes) {
        WriteResult r = w.join();
        assertThat(r.code()).as(r.toString()).isEqualTo(ResultCode.ACCEPTED);
      }
    }
    leases.forEach(Lease::close);
  }
}
