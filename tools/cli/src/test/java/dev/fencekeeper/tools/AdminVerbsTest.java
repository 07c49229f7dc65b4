package dev.fencekeeper.tools;

import static dev.fencekeeper.tools.CliRun.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fencekeeper.client.EndpointClusters;
import dev.fencekeeper.client.FencingAdmin;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.KeyChange;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.proto.FencekeeperGrpc;
import dev.fencekeeper.proto.NodeInfo;
import dev.fencekeeper.proto.NodeInfoQuery;
import dev.fencekeeper.proto.Response;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.stream.IntStream;
import java.util.stream.StreamSupport;
import org.apache.ratis.thirdparty.io.grpc.Server;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyServerBuilder;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The admin verbs against three real nodes (serving metrics) in this JVM: output, JSON and exit
 * codes.
 */
@Timeout(180)
class AdminVerbsTest {
  @RegisterExtension static final InProcessCluster cluster = InProcessCluster.perClassWithMetrics();

  private static CliRun cli(String... args) {
    return cluster.cli(args);
  }

  private static JsonNode okJson(CliRun run) throws IOException {
    assertThat(run.exitCode()).as(run.toString()).isZero();
    JsonNode json = json(run);
    assertThat(json.get("status").asText()).isEqualTo("OK");
    return json;
  }

  private static String leader() throws IOException {
    return okJson(cli("status", "--json")).get("leader").asText();
  }

  private static List<String> ids(JsonNode array, String field) {
    return StreamSupport.stream(array.spliterator(), false)
        .map(n -> n.get(field).asText())
        .toList();
  }

  // ---------------------------------------------------------------------------------------------
  // status

  // Guarantee: endpoints that span two clusters are told apart: status prints which node belongs
  // to which cluster and exits 23 (JSON: status CLUSTER_IDS_DIFFER), and FencingAdmin's
  // endpointClusters says they are not one cluster, naming each endpoint's id. Here the third
  // endpoint is a node of another cluster (it answers NodeStatus only).
  @Test
  void endpointsOfTwoClustersAreToldApart() throws Exception {
    String other = "00000000000000bb";
    int port = LocalPorts.freeNodePort();
    Server stranger =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
            .addService(
                new FencekeeperGrpc.FencekeeperImplBase() {
                  @Override
                  public void nodeStatus(NodeInfoQuery request, StreamObserver<Response> answer) {
                    answer.onNext(
                        Response.newBuilder()
                            .setCode(dev.fencekeeper.proto.ResultCode.FOUND)
                            .setNode(
                                NodeInfo.newBuilder()
                                    .setId("x1")
                                    .setAddress("127.0.0.1:" + port)
                                    .setClientAddress("127.0.0.1:" + port)
                                    .setRole("LEADER")
                                    .setClusterId(other))
                            .build());
                    answer.onCompleted();
                  }
                })
            .build()
            .start();
    try {
      String mixed = cluster.endpoints() + ",127.0.0.1:" + port;
      String ours = okJson(cli("status", "--json")).get("clusterId").asText();
      CliRun table = CliRun.run(cluster.dataDir(), "status", "--endpoints", mixed);
      assertThat(table.exitCode()).as(table.toString()).isEqualTo(23);
      assertThat(table.out())
          .contains("cluster ids differ, these nodes do not form one cluster: ")
          .contains(" in " + ours)
          .contains(" in " + other);
      CliRun asJson = CliRun.run(cluster.dataDir(), "status", "--json", "--endpoints", mixed);
      assertThat(asJson.exitCode()).isEqualTo(23);
      JsonNode j = json(asJson);
      assertThat(j.get("status").asText()).isEqualTo("CLUSTER_IDS_DIFFER");
      assertThat(j.get("clusterIdsDiffer").asBoolean()).isTrue();
      assertThat(j.has("clusterId")).isFalse();

      try (FencingAdmin admin = FencingAdmin.connect(withEndpoints(mixed))) {
        EndpointClusters clusters = admin.endpointClusters(Duration.ofSeconds(5));
        assertThat(clusters.oneCluster()).isFalse();
        assertThat(clusters.clusterId()).isEmpty();
        assertThat(clusters.byCluster()).containsOnlyKeys(ours, other);
        assertThat(clusters.unanswered()).isEmpty();
      }
      try (FencingAdmin admin = FencingAdmin.connect(withEndpoints(cluster.endpoints()))) {
        EndpointClusters clusters = admin.endpointClusters(Duration.ofSeconds(5));
        assertThat(clusters.oneCluster()).isTrue();
        assertThat(clusters.clusterId()).contains(ours);
        assertThat(clusters.clusterIds()).hasSize(3);
      }
    } finally {
      stranger.shutdownNow();
    }
  }

  /** The cluster's configuration, reaching the nodes at {@code endpoints}. */
  private static ClusterConfig withEndpoints(String endpoints) {
    Properties p = cluster.config().toProperties();
    p.setProperty("endpoints", endpoints);
    return ClusterConfig.fromProperties(p);
  }

  // Guarantee: status adds per node the commit index, newest snapshot index, Raft log size on disk,
  // the leader it follows and its metrics port, in the table and in JSON, keeping the earlier
  // fields.
  @Test
  void statusShowsCommitSnapshotLogSizeAndLeader() throws IOException {
    cli("snapshot", "create", "--all");

    JsonNode json = okJson(cli("status", "--json"));
    CliRun table = cli("status");

    String leader = json.get("leader").asText();
    for (JsonNode node : json.get("nodes")) {
      assertThat(node.get("role").asText()).isIn("LEADER", "FOLLOWER");
      assertThat(node.get("commitIndex").asLong())
          .isGreaterThanOrEqualTo(node.get("lastAppliedIndex").asLong());
      assertThat(node.get("snapshotIndex").asLong()).isPositive();
      assertThat(node.get("logSizeBytes").asLong()).isPositive();
      assertThat(node.get("leaderId").asText()).isEqualTo(leader);
      assertThat(node.get("metricsPort").asInt()).isPositive();
      assertThat(node.has("pid")).isTrue();
      assertThat(node.has("term")).isTrue();
    }
    List<String> lines = table.out().lines().toList();
    assertThat(lines.get(0))
        .matches(
            "ID +ADDRESS +PID +ROLE +TERM +APPLIED +COMMIT +SNAPSHOT +LOG +LEADER +MATCH +LAG");
    assertThat(lines.subList(1, 4))
        .allMatch(
            l ->
                l.matches(
                    "n[123] +127\\.0\\.0\\.1:\\d+ +\\d+ +(LEADER|FOLLOWER) +\\d+ +\\d+ +\\d+ +\\d+"
                        + " +[\\d.]+(B|KiB|MiB|GiB) +n[123] +(-|\\d+) +(-|\\d+/[\\d.]+s)"));
    // Every node belongs to the one cluster, and says so (each learns the id within a second of the
    // cluster's first entry).
    JsonNode known =
        Awaitility.await()
            .atMost(Duration.ofSeconds(20))
            .pollInterval(Duration.ofMillis(200))
            .until(
                () -> okJson(cli("status", "--json")),
                j -> {
                  for (JsonNode node : j.get("nodes")) {
                    if (!node.has("clusterId")) {
                      return false;
                    }
                  }
                  return j.has("clusterId");
                });
    String clusterId = known.get("clusterId").asText();
    assertThat(clusterId).matches("[0-9a-f]{16}");
    assertThat(known.get("clusterIdsDiffer").asBoolean()).isFalse();
    assertThat(cli("status").out().lines()).contains("cluster " + clusterId);
  }

  // ---------------------------------------------------------------------------------------------
  // members

  // Guarantee: members list names every voting member with its address, marks the leader, and ends
  // with the peers= line for a node's properties file; --json has the same.
  @Test
  void membersListShowsMembersLeaderAndPeersLine() throws IOException {
    JsonNode json = okJson(cli("members", "list", "--json"));
    CliRun table = cli("members", "list");

    assertThat(ids(json.get("members"), "id")).containsExactly("n1", "n2", "n3");
    assertThat(ids(json.get("members"), "address"))
        .containsExactlyElementsOf(
            cluster.config().peers().stream().map(PeerAddress::address).toList());
    assertThat(json.get("leader").asText()).isEqualTo(leader());
    assertThat(json.get("peers").asText()).isEqualTo(cluster.peersWithIds());
    assertThat(json.get("changing").asBoolean()).isFalse();
    assertThat(table.exitCode()).isZero();
    List<String> lines = table.out().lines().toList();
    assertThat(lines).hasSize(5);
    assertThat(lines.get(0)).matches("ID +ADDRESS +MATCH +LAG");
    assertThat(lines.subList(1, 4)).filteredOn(l -> l.endsWith("leader")).hasSize(1);
    assertThat(lines.get(4)).isEqualTo("peers=" + cluster.peersWithIds());
  }

  // Guarantee: a node started in join mode is added with members add (exit 0) and then serves as a
  // member; members remove takes it out again (exit 0); adding it twice is INVALID_ARGUMENT (9),
  // removing an unknown member NOT_FOUND (10), a malformed member a usage error (2), a node that
  // does not run UNAVAILABLE (11).
  @Test
  void membersAddAndRemoveAJoinedNode() throws IOException {
    PeerAddress n4 = cluster.startJoining("n4");
    String spec = "n4=" + n4.address();

    CliRun added = cli("members", "add", spec);
    JsonNode again = json(cli("members", "add", spec, "--json"));

    assertThat(added.exitCode()).as(added.toString()).isZero();
    assertThat(added.out())
        .startsWith("ADDED n4 at " + n4.address() + "\n")
        .contains("peers=" + cluster.peersWithIds() + "," + n4);
    assertThat(again.get("status").asText()).isEqualTo("INVALID_ARGUMENT");
    assertThat(cli("members", "add", spec).exitCode()).isEqualTo(ExitCode.INVALID_ARGUMENT.code());
    JsonNode four = okJson(cli("members", "list", "--json"));
    assertThat(ids(four.get("members"), "id")).containsExactly("n1", "n2", "n3", "n4");
    // The new member has caught up: it reports the same leader and applies what the cluster
    // commits.
    String allFour = cluster.peersWithIds() + "," + n4;
    try {
      // Up to a stuck appender's restart (raft.stuck-follower.restart-after, 20 s) and more.
      Awaitility.await()
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(200))
          .untilAsserted(
              () -> {
                JsonNode status =
                    json(CliRun.run(cluster.dataDir(), "status", "--json", "--peers", allFour));
                JsonNode n4Status = status.get("nodes").get(3);
                assertThat(n4Status.get("id").asText()).isEqualTo("n4");
                assertThat(n4Status.get("role").asText()).isIn("FOLLOWER", "LEADER");
                assertThat(n4Status.get("leaderId").asText())
                    .isEqualTo(status.get("leader").asText());
              });
    } catch (AssertionError | RuntimeException notCaughtUp) {
      // The class shares one cluster: leave it with the three members the other tests expect.
      cli("members", "remove", "n4");
      cluster.stopNode("n4");
      throw notCaughtUp;
    }

    JsonNode removed = okJson(cli("members", "remove", "n4", "--json"));
    CliRun unknown = cli("members", "remove", "n4", "--json");

    assertThat(removed.get("removed").asText()).isEqualTo("n4");
    assertThat(ids(removed.get("members"), "id")).containsExactly("n1", "n2", "n3");
    cluster.stopNode("n4");
    assertThat(unknown.exitCode()).isEqualTo(ExitCode.NOT_FOUND.code());
    assertThat(json(unknown).get("status").asText()).isEqualTo("NOT_FOUND");
    CliRun malformed = cli("members", "add", "n5");
    assertThat(malformed.exitCode()).isEqualTo(ExitCode.USAGE.code());
    assertThat(malformed.err()).contains("<id>=<host:port>");
    CliRun absent = cli("members", "add", "n5=127.0.0.1:" + LocalPorts.freeNodePort());
    assertThat(absent.exitCode()).as(absent.toString()).isEqualTo(ExitCode.UNAVAILABLE.code());
    assertThat(absent.out()).startsWith("UNAVAILABLE: cannot reach new member n5");
  }

  // Guarantee: `server --config FILE --join` runs a group-less node that members add turns into a
  // member, and it stops cleanly (exit 0) when its parent process ends.
  @Test
  void serverJoinRunsANodeThatCanBeAdded() throws Exception {
    PeerAddress n5 = new PeerAddress("n5", "127.0.0.1", LocalPorts.freeNodePort());
    Path config = cluster.dataDir().resolve("n5.properties");
    cluster.joiningConfig(n5).withStorageDir(cluster.dataDir().resolve("n5")).store(config);
    Process parent = new ProcessBuilder("sleep", "120").start();
    String logDir = System.getProperty(ServerCommand.LOG_DIR_PROPERTY);
    String logLevel = System.getProperty(ServerCommand.LOG_LEVEL_PROPERTY);
    CliRun[] server = new CliRun[1];
    Thread serverThread =
        new Thread(
            () ->
                server[0] =
                    CliRun.run(
                        cluster.dataDir(),
                        "server",
                        "--config",
                        config.toString(),
                        "--join",
                        "--parent-pid",
                        Long.toString(parent.pid())));
    try {
      serverThread.start();
      Awaitility.await()
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(200))
          .until(() -> cli("members", "add", "n5=" + n5.address()).exitCode() == 0);
      assertThat(ids(okJson(cli("members", "list", "--json")).get("members"), "id")).contains("n5");
      assertThat(cli("members", "remove", "n5").exitCode()).isZero();
    } finally {
      parent.destroyForcibly();
      serverThread.join(60_000);
      restore(ServerCommand.LOG_DIR_PROPERTY, logDir);
      restore(ServerCommand.LOG_LEVEL_PROPERTY, logLevel);
    }
    assertThat(serverThread.isAlive()).isFalse();
    assertThat(server[0].exitCode()).as(server[0].toString()).isZero();
    assertThat(server[0].err())
        .contains("parent process " + parent.pid() + " is gone; stopping node n5");
  }

  // Guarantee: a node seeded from a backup that joins a cluster which did not start from that
  // backup stops at the first log entry it cannot follow, and `server` exits 12 saying why, instead
  // of diverging; `members add` does not call it ADDED but NOT_SERVING (exit 11), saying why. (A
  // cluster of its own: once a cluster has a snapshot, a joiner installs it and
  // the seed no longer matters.)
  @Test
  void serverExitsWhenItsStateIsNotTheClustersLineage() throws Exception {
    Path dir = cluster.dataDir().resolve("lineage");
    try (InProcessCluster fresh = InProcessCluster.start(dir.resolve("cluster"))) {
      Path backup = dir.resolve("other.backup");
      assertThat(fresh.cli("backup", backup.toString()).exitCode()).isZero();
      PeerAddress n6 = new PeerAddress("n6", "127.0.0.1", LocalPorts.freeNodePort());
      Path config = dir.resolve("n6.properties");
      fresh.joiningConfig(n6).withStorageDir(dir.resolve("n6")).store(config);
      CliRun seeded =
          CliRun.run(
              dir, "restore", backup.toString(), "--storage-dir", dir.resolve("n6").toString());
      assertThat(seeded.exitCode()).as(seeded.toString()).isZero();
      String logDir = System.getProperty(ServerCommand.LOG_DIR_PROPERTY);
      String logLevel = System.getProperty(ServerCommand.LOG_LEVEL_PROPERTY);
      CliRun[] server = new CliRun[1];
      Thread serverThread =
          new Thread(
              () -> server[0] = CliRun.run(dir, "server", "--config", config.toString(), "--join"));
      CliRun added;
      try {
        serverThread.start();
        added =
            Awaitility.await()
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(200))
                .until(
                    () -> fresh.cli("members", "add", "n6=" + n6.address()),
                    run -> !run.out().startsWith("UNAVAILABLE: cannot reach new member"));
        serverThread.join(90_000);
      } finally {
        restore(ServerCommand.LOG_DIR_PROPERTY, logDir);
        restore(ServerCommand.LOG_LEVEL_PROPERTY, logLevel);
      }
      assertThat(serverThread.isAlive())
          .as(
              "the diverged node's process is still running:%n%s",
              java.util.Arrays.stream(serverThread.getStackTrace())
                  .map(Object::toString)
                  .collect(java.util.stream.Collectors.joining("\n")))
          .isFalse();
      assertThat(server[0].exitCode()).as(server[0].toString()).isEqualTo(ExitCode.INTERNAL.code());
      assertThat(server[0].err()).contains("node n6 stopped").contains("did not start from one");
      assertThat(added.exitCode()).as(added.toString()).isEqualTo(ExitCode.UNAVAILABLE.code());
      assertThat(added.out())
          .as(added.toString())
          .startsWith("NOT_SERVING: n6 at " + n6.address() + " was added to the configuration")
          .doesNotContain("ADDED");
    }
  }

  private static void restore(String property, String value) {
    if (value == null) {
      System.clearProperty(property);
    } else {
      System.setProperty(property, value);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // leader

  // Guarantee: leader transfer --to moves leadership there and says from where (exit 0); without
  // --to it moves to another member; step-down ends with a known leader; an unknown member is
  // NOT_FOUND (10).
  @Test
  void leaderTransferAndStepDown() throws IOException {
    String before = leader();
    String target =
        List.of("n1", "n2", "n3").stream()
            .filter(id -> !id.equals(before))
            .findFirst()
            .orElseThrow();

    JsonNode moved = okJson(cli("leader", "transfer", "--to", target, "--json"));
    assertThat(moved.get("leader").asText()).isEqualTo(target);
    assertThat(moved.get("previous").asText()).isEqualTo(before);
    assertThat(leader()).isEqualTo(target);

    CliRun any = cli("leader", "transfer");
    assertThat(any.exitCode()).as(any.toString()).isZero();
    assertThat(any.line()).matches("LEADER n[123] \\(was " + target + "\\)");
    assertThat(any.line()).doesNotStartWith("LEADER " + target + " ");

    CliRun stepDown = cli("leader", "step-down");
    assertThat(stepDown.exitCode()).as(stepDown.toString()).isZero();
    assertThat(stepDown.line()).matches("LEADER n[123].*");

    CliRun unknown = cli("leader", "transfer", "--to", "n9");
    assertThat(unknown.exitCode()).isEqualTo(ExitCode.NOT_FOUND.code());
    assertThat(unknown.line()).startsWith("NOT_FOUND: no member n9");
  }

  // ---------------------------------------------------------------------------------------------
  // snapshot

  // Guarantee: snapshot create snapshots the leader by default, one node with --node, every member
  // with --all, printing the index each covers; status then shows it; --node and --all together is
  // a usage error.
  @Test
  void snapshotCreateOnLeaderNodeOrAll() throws IOException {
    try (FencingClient client = FencingClient.connect(cluster.config())) {
      client.acquireToken("snapshot-me", Duration.ofSeconds(30), "w");
    }
    CliRun onLeader = cli("snapshot", "create");
    JsonNode one = okJson(cli("snapshot", "create", "--node", "n2", "--json"));
    JsonNode all = okJson(cli("snapshot", "create", "--all", "--json"));

    assertThat(onLeader.exitCode()).as(onLeader.toString()).isZero();
    assertThat(onLeader.line()).matches("SNAPSHOT n[123] index=\\d+");
    assertThat(ids(one.get("snapshots"), "node")).containsExactly("n2");
    assertThat(ids(all.get("snapshots"), "node")).containsExactly("n1", "n2", "n3");
    long index = all.get("snapshots").get(1).get("index").asLong();
    assertThat(index).isPositive();
    JsonNode status = okJson(cli("status", "--json"));
    assertThat(status.get("nodes").get(1).get("snapshotIndex").asLong())
        .isGreaterThanOrEqualTo(index);

    assertThat(cli("snapshot", "create", "--node", "n9").exitCode())
        .isEqualTo(ExitCode.NOT_FOUND.code());
    assertThat(cli("snapshot", "create", "--node", "n1", "--all").exitCode())
        .isEqualTo(ExitCode.USAGE.code());
  }

  // ---------------------------------------------------------------------------------------------
  // listings and inspect

  // Guarantee: leases list shows each resource with a prefix, its live lease (token, owner, time
  // left), newest token and waiters; --limit stops early and says more follow.
  @Test
  void leasesListShowsLiveLeases() throws IOException {
    long a;
    long b;
    try (FencingClient client = FencingClient.connect(cluster.config())) {
      a = client.acquireToken("ll-alpha", Duration.ofSeconds(60), "worker-a").token();
      b = client.acquireToken("ll-beta", Duration.ofSeconds(60), "worker-b").token();
      client.release("ll-beta", b);
    }

    JsonNode json = okJson(cli("leases", "list", "--prefix", "ll-", "--json"));
    CliRun table = cli("leases", "list", "--prefix", "ll-");
    JsonNode limited = okJson(cli("leases", "list", "--prefix", "ll-", "--limit", "1", "--json"));

    assertThat(ids(json.get("leases"), "resource")).containsExactly("ll-alpha", "ll-beta");
    JsonNode alpha = json.get("leases").get(0);
    assertThat(alpha.get("live").asBoolean()).isTrue();
    assertThat(alpha.get("token").asLong()).isEqualTo(a);
    assertThat(alpha.get("owner").asText()).isEqualTo("worker-a");
    assertThat(alpha.get("expiresAtMs").asLong()).isPositive();
    JsonNode beta = json.get("leases").get(1);
    assertThat(beta.get("live").asBoolean()).isFalse();
    assertThat(beta.get("currentToken").asLong()).isEqualTo(b);
    assertThat(json.get("more").asBoolean()).isFalse();
    List<String> lines = table.out().lines().toList();
    assertThat(lines.get(0)).matches("RESOURCE +TOKEN +OWNER +EXPIRES +NEWEST +WAITERS");
    assertThat(lines.get(1)).matches("ll-alpha +" + a + " +worker-a +in \\d+\\.\\ds +" + a + " +0");
    assertThat(lines.get(2)).matches("ll-beta +- +- +- +" + b + " +0");
    assertThat(lines.get(3)).isEqualTo("2 resources, 1 live lease");
    assertThat(ids(limited.get("leases"), "resource")).containsExactly("ll-alpha");
    assertThat(limited.get("more").asBoolean()).isTrue();
  }

  // Guarantee: keys list pages through every key of a resource (more than one page), in name order,
  // with token, version, size and write time; --prefix filters and --limit stops early.
  @Test
  void keysListPagesThroughEveryKey() throws IOException {
    int keys = ListingCommands.PAGE + 88;
    long token;
    try (FencingClient client = FencingClient.connect(cluster.config())) {
      token = client.acquireToken("many-keys", Duration.ofSeconds(60), "loader").token();
      for (int from = 0; from < keys; from += 64) {
        List<KeyChange> batch =
            IntStream.range(from, Math.min(keys, from + 64))
                .mapToObj(i -> KeyChange.put(String.format("k%05d", i), "v" + i))
                .toList();
        assertThat(client.write("many-keys", token, batch, null).code())
            .isEqualTo(ResultCode.ACCEPTED);
      }
    }

    JsonNode json = okJson(cli("keys", "list", "many-keys", "--json"));
    CliRun table = cli("keys", "list", "many-keys", "--prefix", "k0000");
    JsonNode limited = okJson(cli("keys", "list", "many-keys", "--limit", "5", "--json"));

    assertThat(json.get("keys")).hasSize(keys);
    assertThat(ids(json.get("keys"), "key"))
        .isSorted()
        .startsWith("k00000")
        .endsWith(String.format("k%05d", keys - 1));
    JsonNode first = json.get("keys").get(0);
    assertThat(first.get("acceptedToken").asLong()).isEqualTo(token);
    assertThat(first.get("version").asLong()).isEqualTo(1);
    assertThat(first.get("valueBytes").asLong()).isEqualTo(2);
    assertThat(first.get("writtenAtMs").asLong()).isPositive();
    assertThat(json.get("more").asBoolean()).isFalse();
    List<String> lines = table.out().lines().toList();
    assertThat(lines).hasSize(1 + 10 + 1);
    assertThat(lines.get(0)).matches("KEY +TOKEN +VERSION +BYTES +WRITTEN");
    assertThat(lines.get(1)).matches("k00000 +" + token + " +1 +2 +\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z");
    assertThat(lines.get(11)).isEqualTo("10 keys in many-keys");
    assertThat(limited.get("keys")).hasSize(5);
    assertThat(limited.get("more").asBoolean()).isTrue();
  }

  // Guarantee: inspect shows a key's value, accepted token, version and write time with the
  // resource's live lease and newest token (exit 0); a missing key is NOT_FOUND (10) but still
  // shows the lease.
  @Test
  void inspectShowsValueLeaseAndNewestToken() throws IOException {
    long token;
    try (FencingClient client = FencingClient.connect(cluster.config())) {
      token = client.acquireToken("inspected", Duration.ofSeconds(60), "worker-i").token();
      client.write("inspected", token, "day", "total 42".getBytes(StandardCharsets.UTF_8));
    }

    CliRun text = cli("inspect", "inspected", "day");
    JsonNode json = json(cli("inspect", "inspected", "day", "--json"));
    CliRun missing = cli("inspect", "inspected", "night");

    assertThat(text.exitCode()).as(text.toString()).isZero();
    List<String> lines = text.out().lines().toList();
    assertThat(lines.get(0))
        .isEqualTo("FOUND inspected/day = \"total 42\" (token " + token + ", version 1)");
    assertThat(lines.get(1))
        .matches("  written \\d{4}-.*Z \\(state-machine time\\) with token " + token);
    assertThat(lines.get(2))
        .matches(
            "  lease token="
                + token
                + " owner worker-i, expires in \\d+\\.\\ds; newest token "
                + token);
    assertThat(json.get("status").asText()).isEqualTo("FOUND");
    assertThat(json.get("value").asText()).isEqualTo("total 42");
    assertThat(json.get("acceptedToken").asLong()).isEqualTo(token);
    assertThat(json.get("version").asLong()).isEqualTo(1);
    assertThat(json.get("writtenAtMs").asLong()).isPositive();
    assertThat(json.get("lease").get("live").asBoolean()).isTrue();
    assertThat(json.get("lease").get("token").asLong()).isEqualTo(token);
    assertThat(json.get("lease").get("holderOwner").asText()).isEqualTo("worker-i");
    assertThat(json.get("lease").get("currentToken").asLong()).isEqualTo(token);
    assertThat(missing.exitCode()).isEqualTo(ExitCode.NOT_FOUND.code());
    assertThat(missing.out()).startsWith("NOT_FOUND: ").contains("lease token=" + token);
  }

  // ---------------------------------------------------------------------------------------------
  // metrics

  // Guarantee: metrics prints the leader's Prometheus text (exit 0); --node picks a member and
  // --json gives {series: value}; --url fetches any endpoint and --grep filters lines; an unknown
  // member is NOT_FOUND (10).
  @Test
  void metricsPrintsANodesPrometheusText() throws IOException {
    CliRun leaderText = cli("metrics");
    JsonNode n2 = okJson(cli("metrics", "--node", "n2", "--json"));
    int port = okJson(cli("status", "--json")).get("nodes").get(0).get("metricsPort").asInt();
    CliRun byUrl =
        CliRun.run(
            cluster.dataDir(),
            "metrics",
            "--url",
            "http://127.0.0.1:" + port + "/metrics",
            "--grep",
            "fencekeeper_raft_term");

    assertThat(leaderText.exitCode()).as(leaderText.toString()).isZero();
    assertThat(leaderText.out())
        .contains("fencekeeper_writes_accepted_total ")
        .containsPattern("(?m)^fencekeeper_raft_leading 1\\.0$");
    assertThat(n2.get("node").asText()).isEqualTo("n2");
    assertThat(n2.get("url").asText()).matches("http://127\\.0\\.0\\.1:\\d+/metrics");
    assertThat(n2.get("samples").get("fencekeeper_raft_term").asDouble()).isPositive();
    assertThat(byUrl.exitCode()).as(byUrl.toString()).isZero();
    assertThat(byUrl.out().lines())
        .isNotEmpty()
        .allMatch(l -> l.startsWith("fencekeeper_raft_term"));
    assertThat(cli("metrics", "--node", "n9").exitCode()).isEqualTo(ExitCode.NOT_FOUND.code());
    assertThat(
            CliRun.run(
                    cluster.dataDir(),
                    "metrics",
                    "--url",
                    "http://127.0.0.1:" + LocalPorts.freeNodePort() + "/metrics")
                .exitCode())
        .isEqualTo(ExitCode.UNAVAILABLE.code());
  }
}
