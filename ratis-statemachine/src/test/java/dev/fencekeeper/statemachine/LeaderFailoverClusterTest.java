package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.KeyChange;
import dev.fencekeeper.client.ReadResult;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.client.WriteResult;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Killing the leader while workers acquire and write loses nothing and never reuses a token. */
@Timeout(180)
class LeaderFailoverClusterTest {
  @TempDir Path dataDir;

  // Guarantee: tokens granted after a leader dies exceed every token granted before, and every
  // write acknowledged before or during the failover is readable afterwards.
  @Test
  void killingTheLeaderKeepsTokensIncreasingAndAcknowledgedWritesReadable() throws Exception {
    try (TestCluster cluster = TestCluster.start(dataDir)) {
      cluster.awaitLeader();
      // "resource/key" -> the last acknowledged value, then any value whose outcome is unknown (a
      // timeout may still have been applied): the final read must be one of these.
      Map<String, List<String>> acceptable = new ConcurrentHashMap<>();
      List<Long> grantedBeforeKill = new CopyOnWriteArrayList<>();
      List<Long> grantedAfterKill = new CopyOnWriteArrayList<>();
      AtomicBoolean killing = new AtomicBoolean();
      AtomicBoolean killed = new AtomicBoolean();
      AtomicBoolean stop = new AtomicBoolean();

      ExecutorService workers = Executors.newFixedThreadPool(4);
      List<Future<?>> running = new ArrayList<>();
      for (int w = 0; w < 4; w++) {
        String resource = "invoice-" + w;
        FencingClient client = cluster.newClient("worker-" + w);
        running.add(
            workers.submit(
                () -> {
                  int round = 0;
                  while (!stop.get()) {
                    boolean afterKill =
                        killed.get(); // read before sending: a grant after this is after the kill
                    Result grant = client.acquireToken(resource, Duration.ofSeconds(5), "worker");
                    if (grant.code() != ResultCode.GRANTED) {
                      continue; // UNAVAILABLE during the election: try again
                    }
                    // Before the kill means answered before it began. A request in flight across
                    // the kill may be
                    // retried to the new leader and logged after requests sent later: its token
                    // orders by the log,
                    // not by when it was sent, so it belongs to neither side.
                    boolean answeredBeforeKill = !killing.get();
                    if (afterKill) {
                      grantedAfterKill.add(grant.token());
                    } else if (answeredBeforeKill) {
                      grantedBeforeKill.add(grant.token());
                    }
                    String key = "k" + (round++ % 3);
                    String value = resource + "@" + grant.token();
                    WriteResult write =
                        client.write(
                            resource, grant.token(), List.of(KeyChange.put(key, value)), null);
                    if (write.code() == ResultCode.ACCEPTED) {
                      acceptable.put(resource + "/" + key, new ArrayList<>(List.of(value)));
                    } else if (write.code() == ResultCode.UNAVAILABLE) {
                      acceptable
                          .computeIfAbsent(resource + "/" + key, k -> new ArrayList<>())
                          .add(value);
                    }
                    client.release(resource, grant.token());
                  }
                  return null;
                }));
      }

      // Two grants per worker on each side of the kill: the workers ran on the old leader, and
      // again on the new one.
      await().atMost(Duration.ofSeconds(30)).until(() -> grantedBeforeKill.size() >= 8);
      String leader = cluster.awaitLeader();
      killing.set(true);
      cluster.stopNode(leader);
      killed.set(true);
      await().atMost(Duration.ofSeconds(60)).until(() -> grantedAfterKill.size() >= 8);
      stop.set(true);
      for (Future<?> f : running) {
        f.get(60, TimeUnit.SECONDS);
      }
      workers.shutdownNow();

      assertThat(grantedBeforeKill).isNotEmpty();
      assertThat(grantedAfterKill).as("grants after the leader was killed").isNotEmpty();
      long maxBefore = grantedBeforeKill.stream().mapToLong(Long::longValue).max().orElseThrow();
      assertThat(grantedAfterKill).allSatisfy(t -> assertThat(t).isGreaterThan(maxBefore));

      FencingClient reader = cluster.newClient("reader");
      acceptable.forEach(
          (resourceKey, values) -> {
            String[] parts = resourceKey.split("/");
            ReadResult read = reader.read(parts[0], parts[1]);
            assertThat(read.isFound()).as(resourceKey).isTrue();
            assertThat(values).as(resourceKey).contains(read.valueAsString());
          });
      assertThat(acceptable).isNotEmpty();
    }
  }
}
