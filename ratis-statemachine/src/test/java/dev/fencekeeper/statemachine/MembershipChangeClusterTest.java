package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingAdmin;
import dev.fencekeeper.client.FencingAdmin.Membership;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.KeyChange;
import dev.fencekeeper.client.ReadResult;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.client.WriteResult;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.server.FencekeeperServer;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Growing the cluster from three members to five (two new nodes started in join mode) and shrinking
 * it back to three (two original members removed, possibly the leader) while workers acquire, write
 * and release on shared resources.
 */
@Timeout(300)
class MembershipChangeClusterTest {
  private static final int WORKERS = 4;
  private static final List<String> RESOURCES = List.of("ledger-a", "ledger-b");
  private static final Duration TTL = Duration.ofSeconds(5);
  private static final Duration CHANGE_SETTLE = Duration.ofSeconds(2);

  @TempDir Path dataDir;

  /** One grant as a worker saw it: when it asked, when the answer came, and the token. */
  private record Grant(String resource, long askedNanos, long answeredNanos, long token) {}

  // Guarantee: membership 3 -> 5 -> 3 under a running workload loses no acknowledged write, never
  // lets a token go backwards on a resource (a grant asked for after another was answered has a
  // larger token), and the cluster serves after every change.
  @Test
  void growingToFiveAndShrinkingToThreeLosesNothingAndKeepsTokensIncreasing() throws Exception {
    List<FencekeeperServer> joined = new ArrayList<>();
    try (TestCluster cluster = TestCluster.start(dataDir)) {
      cluster.awaitLeader();
      ClusterConfig original = cluster.config();
      PeerAddress n4 = new PeerAddress("n4", "127.0.0.1", LocalPorts.freeNodePort());
      PeerAddress n5 = new PeerAddress("n5", "127.0.0.1", LocalPorts.freeNodePort());
      List<PeerAddress> five = new ArrayList<>(original.peers());
      five.addAll(List.of(n4, n5));

      // Acknowledged writes: "resource/key" -> value. Unknown outcomes (UNAVAILABLE): may or may
      // not exist.
      Map<String, String> acknowledged = new ConcurrentHashMap<>();
      Map<String, String> unknown = new ConcurrentHashMap<>();
      List<Grant> grants = new CopyOnWriteArrayList<>();
      List<String> violations = new CopyOnWriteArrayList<>();
      AtomicInteger rounds = new AtomicInteger();
      AtomicBoolean stop = new AtomicBoolean();

      ExecutorService workers = Executors.newFixedThreadPool(WORKERS);
      List<Future<?>> running = new ArrayList<>();
      for (int w = 0; w < WORKERS; w++) {
        String worker = "worker-" + w;
        String resource = RESOURCES.get(w % RESOURCES.size());
        // Clients know only the original three nodes, as deployed clients would; they learn the
        // rest from the cluster's redirects.
        FencingClient client = cluster.newClient(worker);
        running.add(
            workers.submit(
                () -> {
                  int round = 0;
                  while (!stop.get()) {
                    long asked = System.nanoTime();
                    Result grant = client.acquireToken(resource, TTL, worker);
                    long answered = System.nanoTime();
                    if (grant.code() != ResultCode.GRANTED) {
                      Thread.sleep(
                          20); // HELD by the other worker, or UNAVAILABLE during a change: try
                      // again
                      continue;
                    }
                    grants.add(new Grant(resource, asked, answered, grant.token()));
                    String key = worker + "-" + round++;
                    String value = key + "@" + grant.token();
                    WriteResult write =
                        client.write(
                            resource, grant.token(), List.of(KeyChange.put(key, value)), null);
                    if (write.code() == ResultCode.ACCEPTED) {
                      if (write.acceptedToken() != grant.token()) {
                        violations.add(
                            key
                                + " accepted with token "
                                + write.acceptedToken()
                                + ", sent "
                                + grant.token());
                      }
                      acknowledged.put(resource + "/" + key, value);
                    } else if (write.code() == ResultCode.UNAVAILABLE) {
                      unknown.put(resource + "/" + key, value);
                    } else if (write.code() != ResultCode.LEASE_EXPIRED
                        && write.code() != ResultCode.STALE_TOKEN) {
                      // Only a lease that ran out during a slow change (and maybe was re-granted)
                      // may refuse it.
                      violations.add(key + ": write with the live token answered " + write);
                    }
                    client.release(resource, grant.token());
                    rounds.incrementAndGet();
                  }
                  return null;
                }));
      }

      awaitProgress(rounds, 10);
      List<FencekeeperServer> serving = new ArrayList<>();
      try (FencingAdmin admin = FencingAdmin.connect(original)) {
        // 3 -> 4 -> 5: each new node starts without the group and is then added.
        for (PeerAddress added : List.of(n4, n5)) {
          FencekeeperServer node = FencekeeperServer.join(nodeConfig(original, five, added.id()));
          joined.add(node);
          Membership after = admin.addMember(added);
          assertThat(after.members()).contains(added);
          assertServes(original, "after adding " + added.id());
          awaitProgress(rounds, 5);
        }
        assertThat(admin.members()).containsExactlyInAnyOrderElementsOf(five);
        Thread.sleep(CHANGE_SETTLE.toMillis());

        // 5 -> 4 -> 3: remove two of the original members (the leader among them, if it is one of
        // them).
        for (String removed : List.of("n1", "n2")) {
          Membership after = admin.removeMember(removed);
          assertThat(after.members()).extracting(PeerAddress::id).doesNotContain(removed);
          cluster.stopNode(removed);
          assertServes(original, "after removing " + removed);
          awaitProgress(rounds, 5);
        }
        Membership last = admin.membership();
        assertThat(last.members())
            .extracting(PeerAddress::id)
            .containsExactlyInAnyOrder("n3", "n4", "n5");
        assertThat(last.leaderId()).isIn("n3", "n4", "n5");
      }

      awaitProgress(rounds, 10);
      stop.set(true);
      for (Future<?> f : running) {
        f.get(60, TimeUnit.SECONDS);
      }
      workers.shutdownNow();

      assertThat(violations).isEmpty();
      assertThat(acknowledged).as("acknowledged writes").hasSizeGreaterThan(20);
      assertTokensIncreasePerResource(grants);

      // Every acknowledged write is readable, as written, from the three remaining members; an
      // unknown-outcome write is either absent or exactly what was sent.
      ClusterConfig remaining = withPeers(original, List.of(original.peers().get(2), n4, n5));
      try (FencingClient reader = FencingClient.connect(remaining)) {
        for (Map.Entry<String, String> e : acknowledged.entrySet()) {
          String[] rk = e.getKey().split("/", 2);
          ReadResult read = reader.read(rk[0], rk[1]);
          assertThat(read.code()).as("read %s", e.getKey()).isEqualTo(ResultCode.FOUND);
          assertThat(read.valueAsString()).as("value of %s", e.getKey()).isEqualTo(e.getValue());
        }
        for (Map.Entry<String, String> e : unknown.entrySet()) {
          String[] rk = e.getKey().split("/", 2);
          ReadResult read = reader.read(rk[0], rk[1]);
          if (read.code() == ResultCode.FOUND) {
            assertThat(read.valueAsString()).as("value of %s", e.getKey()).isEqualTo(e.getValue());
          }
        }
        // The token sequence carried on through every change: a grant now beats every grant of the
        // run (a worker's lease whose release went unanswered may need its TTL to run out first).
        long newest = grants.stream().mapToLong(Grant::token).max().orElseThrow();
        AtomicLong last = new AtomicLong();
        await()
            .atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(200))
            .until(
                () -> {
                  Result r = reader.acquireToken(RESOURCES.get(0), TTL, "after-the-changes");
                  last.set(r.token());
                  return r.code() == ResultCode.GRANTED;
                });
        assertThat(last.get()).isGreaterThan(newest);
      }
    } finally {
      for (FencekeeperServer node : joined) {
        node.close();
      }
    }
  }

  // Guarantee: a member restarted in join mode over its own data recovers the group from disk,
  // catches up and can lead; join mode is safe to keep in a node's service definition after it was
  // added.
  @Test
  void aMemberRestartedInJoinModeRecoversItsGroup() throws Exception {
    try (TestCluster cluster = TestCluster.start(dataDir)) {
      cluster.awaitLeader();
      FencingClient client = cluster.newClient("w");
      long token = client.acquireToken("kept", TTL.multipliedBy(6), "w").token();
      assertThat(client.write("kept", token, "k", "before".getBytes()).code())
          .isEqualTo(ResultCode.ACCEPTED);
      cluster.stopNode("n1");
      assertThat(client.write("kept", token, "k", "while n1 was down".getBytes()).code())
          .isEqualTo(ResultCode.ACCEPTED);

      try (FencekeeperServer n1 = FencekeeperServer.join(cluster.nodeConfig("n1"));
          FencingAdmin admin = FencingAdmin.connect(cluster.config())) {
        await()
            .atMost(Duration.ofSeconds(30))
            .until(
                () ->
                    n1.stateMachine()
                        .read(
                            state ->
                                state.read("kept", "k").value().length
                                    == "while n1 was down".length()));
        assertThat(admin.transferLeadership("n1")).isEqualTo("n1");
        assertThat(client.write("kept", token, "k", "n1 leads".getBytes()).code())
            .isEqualTo(ResultCode.ACCEPTED);
        assertThat(admin.members()).extracting(PeerAddress::id).containsExactly("n1", "n2", "n3");
      }
    }
  }

  /**
   * For every two grants on one resource where one was answered before the other was asked for,
   * tokens grow.
   */
  private static void assertTokensIncreasePerResource(List<Grant> grants) {
    for (String resource : RESOURCES) {
      List<Grant> on = grants.stream().filter(g -> g.resource().equals(resource)).toList();
      assertThat(on).as("grants on %s", resource).isNotEmpty();
      assertThat(on.stream().map(Grant::token).distinct().count())
          .as("distinct tokens on %s", resource)
          .isEqualTo(on.size());
      List<Grant> byAnswer =
          on.stream().sorted((a, b) -> Long.compare(a.answeredNanos(), b.answeredNanos())).toList();
      long maxAnsweredToken = Long.MIN_VALUE;
      int next = 0;
      for (Grant g :
          on.stream().sorted((a, b) -> Long.compare(a.askedNanos(), b.askedNanos())).toList()) {
        // Every grant answered before g was asked for must have a smaller token than g.
        while (next < byAnswer.size() && byAnswer.get(next).answeredNanos() < g.askedNanos()) {
          maxAnsweredToken = Math.max(maxAnsweredToken, byAnswer.get(next).token());
          next++;
        }
        assertThat(g.token())
            .as(
                "token of a grant on %s asked after one with token %d was answered",
                resource, maxAnsweredToken)
            .isGreaterThan(maxAnsweredToken);
      }
    }
  }

  /** A probe client acquires, writes and reads back on a fresh resource within a bounded time. */
  private static void assertServes(ClusterConfig cluster, String when) {
    String resource = "probe-" + when.replace(' ', '-');
    try (FencingClient probe = FencingClient.connect(cluster, "probe")) {
      await()
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(100))
          .untilAsserted(
              () -> {
                Result grant = probe.acquireToken(resource, TTL, "probe");
                assertThat(grant.code())
                    .as("acquire %s", when)
                    .isIn(ResultCode.GRANTED, ResultCode.HELD);
                long token =
                    grant.code() == ResultCode.GRANTED
                        ? grant.token()
                        : probe.lease(resource).token();
                WriteResult w =
                    probe.write(
                        resource, token, List.of(KeyChange.put("k", when)), "probe-" + token);
                assertThat(w.code()).as("write %s", when).isEqualTo(ResultCode.ACCEPTED);
                assertThat(probe.read(resource, "k").valueAsString()).isEqualTo(when);
              });
    }
  }

  private static void awaitProgress(AtomicInteger rounds, int more) {
    int target = rounds.get() + more;
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> rounds.get() >= target);
  }

  /** Node {@code id} of the cluster as it will be ({@code peers}), with its own storage. */
  private ClusterConfig nodeConfig(ClusterConfig cluster, List<PeerAddress> peers, String id) {
    Properties p = cluster.toProperties();
    p.setProperty(
        "peers", peers.stream().map(PeerAddress::toString).collect(Collectors.joining(",")));
    p.setProperty("node.id", id);
    p.setProperty("storage.dir", dataDir.resolve(id).toString());
    return ClusterConfig.fromProperties(p);
  }

  /** {@code cluster} (its name, and so its Raft group) reached through {@code peers}. */
  private static ClusterConfig withPeers(ClusterConfig cluster, List<PeerAddress> peers) {
    Properties p = cluster.toProperties();
    p.setProperty(
        "peers", peers.stream().map(PeerAddress::toString).collect(Collectors.joining(",")));
    p.remove("node.id");
    p.remove("storage.dir");
    return ClusterConfig.fromProperties(p);
  }
}
