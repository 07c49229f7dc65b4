package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.ReadConsistency;
import dev.fencekeeper.client.ReadResult;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.metrics.NodeMetric;
import dev.fencekeeper.server.FencekeeperServer;
import dev.fencekeeper.testing.TestCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Far more concurrent commands than the leader may hold pending: the excess is refused with
 * OVERLOADED before it is logged, everything accepted is applied exactly as answered, and the
 * cluster serves and agrees afterwards. Likewise for reads, which every node bounds on arrival.
 */
class OverloadClusterTest {
  private static final int PENDING_LIMIT = 4;
  private static final int CLIENTS = 4;
  private static final int PER_CLIENT = 60;
  private static final int READ_LIMIT = 2;
  private static final int READS_PER_CLIENT = 150;

  @TempDir Path dir;

  @Test
  void excessIsRefusedWithOverloadedAndNothingAcceptedIsLost() {
    Properties p = new Properties();
    p.setProperty("overload.pending-writes.max", Integer.toString(PENDING_LIMIT));
    try (TestCluster cluster = TestCluster.start(dir, p)) {
      FencingStateMachine leaderState = cluster.node(cluster.awaitLeader()).stateMachine();
      // The leader's queue of accepted, unapplied commands, sampled throughout the burst.
      AtomicInteger mostPending = new AtomicInteger();
      AtomicBoolean sampling = new AtomicBoolean(true);
      Thread sampler =
          new Thread(
              () -> {
                while (sampling.get()) {
                  mostPending.accumulateAndGet(leaderState.pendingCommands(), Math::max);
                  LockSupport.parkNanos(200_000);
                }
              });
      sampler.setDaemon(true);
      sampler.start();
      List<FencingClient> clients = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        clients.add(cluster.newClient("load-" + c));
      }
      Map<String, CompletableFuture<Result>> sent = new LinkedHashMap<>();
      for (int i = 0; i < PER_CLIENT; i++) {
        for (int c = 0; c < CLIENTS; c++) {
          String resource = "overload-" + c + "-" + i;
          sent.put(
              resource,
              clients.get(c).acquireTokenAsync(resource, Duration.ofMinutes(5), "load-" + c));
        }
      }
      Map<ResultCode, Integer> counts = new EnumMap<>(ResultCode.class);
      Map<String, Long> granted = new HashMap<>();
      Map<ResultCode, String> examples = new EnumMap<>(ResultCode.class);
      sent.forEach(
          (resource, future) -> {
            Result r = future.join();
            counts.merge(r.code(), 1, Integer::sum);
            examples.putIfAbsent(r.code(), r.message());
            if (r.code() == ResultCode.GRANTED) {
              granted.put(resource, r.token());
            }
          });

      sampling.set(false);
      assertThat(mostPending.get())
          .as("pending commands on the leader")
          .isBetween(1, PENDING_LIMIT);
      assertThat(counts.keySet())
          .as("every answer is a grant or a refusal: %s %s", counts, examples)
          .containsOnly(ResultCode.GRANTED, ResultCode.OVERLOADED);
      assertThat(counts.get(ResultCode.OVERLOADED)).as("%s", counts).isPositive();
      assertThat(counts.get(ResultCode.GRANTED)).as("%s", counts).isPositive();

      // Accepted means applied, with the token the client was told; refused means not applied at
      // all.
      String leader = cluster.awaitLeader();
      FencingStateMachine sm = cluster.node(leader).stateMachine();
      for (String resource : sent.keySet()) {
        Long token = granted.get(resource);
        Long held =
            sm.read(
                state -> {
                  var r = state.resources().get(resource);
                  return r == null || r.lease() == null ? null : r.lease().token();
                });
        assertThat(held).as(resource).isEqualTo(token);
      }

      // Healthy afterwards: a command goes through, and every replica holds the same state.
      assertThat(
              clients.get(0).acquireToken("after-overload", Duration.ofSeconds(30), "check").code())
          .isEqualTo(ResultCode.GRANTED);
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  cluster.running().values().stream()
                          .map(n -> n.stateMachine().digest())
                          .distinct()
                          .count()
                      == 1);
    }
  }

  // Far more concurrent reads than a node may hold: the excess is answered OVERLOADED at once,
  // every other read returns the stored value, each refusal is counted, and every slot comes back
  // afterwards.
  @Test
  void excessReadsAreRefusedWithOverloadedAndTheRestAreAnswered() {
    Properties p = new Properties();
    p.setProperty("overload.pending-reads.max", Integer.toString(READ_LIMIT));
    try (TestCluster cluster = TestCluster.start(dir, p)) {
      String leader = cluster.awaitLeader();
      FencingClient writer = cluster.newClient("writer");
      long token = writer.acquireToken("read-flood", Duration.ofMinutes(5), "writer").token();
      assertThat(
              writer.write("read-flood", token, "k", "v".getBytes(StandardCharsets.UTF_8)).code())
          .isEqualTo(ResultCode.ACCEPTED);
      // Stale reads go to any node: every replica must hold the value first.
      long written = cluster.lastApplied(leader);
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  cluster.running().keySet().stream()
                      .allMatch(id -> cluster.lastApplied(id) >= written));

      AtomicInteger mostInFlight = new AtomicInteger();
      AtomicBoolean sampling = new AtomicBoolean(true);
      Thread sampler =
          new Thread(
              () -> {
                while (sampling.get()) {
                  for (FencekeeperServer node : cluster.running().values()) {
                    mostInFlight.accumulateAndGet(node.readsInFlight(), Math::max);
                  }
                  LockSupport.parkNanos(200_000);
                }
              });
      sampler.setDaemon(true);
      sampler.start();
      List<FencingClient> clients = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        clients.add(cluster.newClient("reader-" + c));
      }
      // A linearizable read holds its slot until its read barrier commits, so reads overlap on the
      // leader while the senders outpace the log; on a starved machine one flood may not, so up to
      // five are sent, and the first with refusals is checked.
      Map<ResultCode, Integer> counts = new EnumMap<>(ResultCode.class);
      for (int flood = 0; flood < 5 && !counts.containsKey(ResultCode.OVERLOADED); flood++) {
        counts.clear();
        List<CompletableFuture<ReadResult>> sent = new ArrayList<>();
        for (int i = 0; i < READS_PER_CLIENT; i++) {
          for (FencingClient client : clients) {
            ReadConsistency consistency =
                i % 5 == 0 ? ReadConsistency.STALE : ReadConsistency.LINEARIZABLE;
            sent.add(client.readAsync("read-flood", "k", consistency));
          }
        }
        for (CompletableFuture<ReadResult> future : sent) {
          ReadResult r = future.join();
          counts.merge(r.code(), 1, Integer::sum);
          if (r.code() == ResultCode.OVERLOADED) {
            assertThat(r.message()).contains("overload.pending-reads.max");
          } else {
            assertThat(r.code()).as("%s: %s", r.code(), r.message()).isEqualTo(ResultCode.FOUND);
            assertThat(r.valueAsString()).isEqualTo("v");
          }
        }
      }
      sampling.set(false);

      int overloaded = counts.getOrDefault(ResultCode.OVERLOADED, 0);
      assertThat(overloaded).as("%s", counts).isPositive();
      assertThat(counts.getOrDefault(ResultCode.FOUND, 0)).as("%s", counts).isPositive();
      assertThat(mostInFlight.get()).as("reads in flight on one node").isBetween(1, READ_LIMIT);
      // A refusal is counted where it happened; a read Ratis's client resent may be refused twice.
      assertThat(sum(cluster, NodeMetric.READS_OVERLOADED.dropwizardName()))
          .isGreaterThanOrEqualTo(overloaded);
      assertThat(sum(cluster, NodeMetric.REQUESTS_OVERLOADED.dropwizardName()))
          .isGreaterThanOrEqualTo(overloaded);
      // Every answered read gave its slot back.
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  cluster.running().values().stream().allMatch(node -> node.readsInFlight() == 0));

      // Healthy afterwards: a write and a read go through.
      assertThat(
              writer.write("read-flood", token, "k", "w".getBytes(StandardCharsets.UTF_8)).code())
          .isEqualTo(ResultCode.ACCEPTED);
      assertThat(writer.read("read-flood", "k").valueAsString()).isEqualTo("w");
    }
  }

  private static long sum(TestCluster cluster, String counter) {
    return cluster.running().values().stream()
        .mapToLong(node -> node.metrics().registry().counter(counter).getCount())
        .sum();
  }
}
