package dev.fencekeeper.config;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ClusterConfigTest {

  private static final String PEERS = "n1@127.0.0.1:7301,n2@127.0.0.1:7302,n3@127.0.0.1:7303";

  private static Properties props(String... keyValues) {
    Properties p = new Properties();
    p.setProperty("peers", PEERS);
    for (int i = 0; i < keyValues.length; i += 2) {
      p.setProperty(keyValues[i], keyValues[i + 1]);
    }
    return p;
  }

  private static ClusterConfig everythingChanged() {
    return ClusterConfig.fromProperties(
        props(
            "cluster.name", "orders-eu",
            "node.id", "n2",
            "peers", "n1@10.0.0.1:9001,n2@10.0.0.2:9001,n3@[fd00::3]:9001",
            "storage.dir", "/var/lib/fencekeeper",
            "log.dir", "/var/log/fencekeeper",
            "lease.ttl.min", "250ms",
            "lease.ttl.max", "10m",
            "lease.takeover-grace", "1500ms",
            "limits.resource-name.max-bytes", "100",
            "limits.key.max-bytes", "1KiB",
            "limits.owner.max-bytes", "64",
            "limits.value.max-bytes", "4MiB",
            "limits.keys-per-write.max", "8",
            "limits.request-id.max-bytes", "36",
            "limits.request-ids-per-lease.max", "16",
            "snapshot.auto-trigger.entries", "500",
            "raft.election.timeout.min", "1s",
            "raft.election.timeout.max", "2s",
            "client.request.timeout", "10s",
            "clock.offset", "-3s",
            "metrics.port", "9100",
            "http.port", "9200",
            "http.bind", "10.0.0.2",
            "client.port", "9500",
            "client.bind", "0.0.0.0",
            "overload.pending-reads.max", "64",
            "limits.sessions-per-client.max", "12",
            "limits.stream-buffer.max", "300"));
  }

  // Guarantee: every node's client address follows one rule (Raft port + 200) unless this node's
  // own client.port says otherwise; client.bind defaults to bind.
  @Test
  void clientAddressesFollowOneRule() {
    ClusterConfig local = ClusterConfig.local(7301);
    assertThat(local.clientAddresses())
        .extracting(PeerAddress::address)
        .containsExactly("127.0.0.1:7501", "127.0.0.1:7502", "127.0.0.1:7503");
    ClusterConfig n2 = local.withNodeId("n2");
    assertThat(n2.clientPort()).isEqualTo(7502);
    assertThat(n2.clientBindHost()).isEqualTo("127.0.0.1");
    assertThat(n2.withBindHost("0.0.0.0").clientBindHost()).isEqualTo("0.0.0.0");
    ClusterConfig moved = n2.withClientPort(9000);
    assertThat(moved.clientAddress().address()).isEqualTo("127.0.0.1:9000");
    assertThat(moved.clientAddresses())
        .extracting(PeerAddress::address)
        .containsExactly("127.0.0.1:7501", "127.0.0.1:9000", "127.0.0.1:7503");
    ClusterConfig c = everythingChanged();
    assertThat(c.clientPort()).isEqualTo(9500);
    assertThat(c.clientBindHost()).isEqualTo("0.0.0.0");
    assertThat(c.streamLimits()).isEqualTo(new StreamLimits(12, 300));
  }

  // Guarantee: a client port that cannot be (beyond 65535, or a Raft or metrics port of the same
  // host) is refused when the config is read, naming client.port.
  @Test
  void impossibleClientPortsAreRefused() {
    assertThatThrownBy(() -> ClusterConfig.local(65400).withNodeId("n1"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("client.port");
    assertThatThrownBy(() -> ClusterConfig.local(7301).withNodeId("n1").withClientPort(7302))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("client.port: '7302' is already the Raft port of peer n2");
    assertThatThrownBy(
            () ->
                ClusterConfig.local(7301)
                    .withNodeId("n1")
                    .withMetricsPort(9000)
                    .withClientPort(9000))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("client.port: '9000' is already metrics.port");
  }

  // Every key is read into the typed field it names, including size suffixes and negative offsets.
  @Test
  void readsEveryKey() {
    ClusterConfig c = everythingChanged();
    assertThat(c.clusterName()).isEqualTo("orders-eu");
    assertThat(c.nodeId()).contains("n2");
    assertThat(c.self()).isEqualTo(new PeerAddress("n2", "10.0.0.2", 9001));
    assertThat(c.peers())
        .extracting(PeerAddress::address)
        .containsExactly("10.0.0.1:9001", "10.0.0.2:9001", "[fd00::3]:9001");
    assertThat(c.storageDir()).isEqualTo(Path.of("/var/lib/fencekeeper"));
    assertThat(c.limits())
        .isEqualTo(
            Limits.builder()
                .minTtl(Duration.ofMillis(250))
                .maxTtl(Duration.ofMinutes(10))
                .takeoverGrace(Duration.ofMillis(1500))
                .maxResourceBytes(100)
                .maxKeyBytes(1024)
                .maxOwnerBytes(64)
                .maxValueBytes(4 << 20)
                .maxKeysPerWrite(8)
                .maxRequestIdBytes(36)
                .maxRequestIdsPerLease(16)
                .build());
    assertThat(c.snapshotAutoTriggerEntries()).isEqualTo(500);
    assertThat(c.electionTimeoutMin()).isEqualTo(Duration.ofSeconds(1));
    assertThat(c.electionTimeoutMax()).isEqualTo(Duration.ofSeconds(2));
    assertThat(c.requestTimeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(c.clockOffsetMs()).isEqualTo(-3000);
    assertThat(c.metricsPort()).isEqualTo(9100);
    assertThat(c.overload().maxPendingReads()).isEqualTo(64);
  }

  // toProperties -> fromProperties reproduces an equal config, for non-default and default values.
  @Test
  void propertiesRoundTrip() {
    for (ClusterConfig c :
        List.of(
            everythingChanged(),
            ClusterConfig.localDefaults(),
            ClusterConfig.localDefaults()
                .withNodeId("n3")
                .withClockOffsetMs(1)
                .withMetricsPort(9200))) {
      ClusterConfig back = ClusterConfig.fromProperties(c.toProperties());
      assertThat(back).isEqualTo(c).hasSameHashCodeAs(c);
      assertThat(back.storageDir()).isEqualTo(c.storageDir());
      assertThat(back.clusterName()).isEqualTo(c.clusterName());
    }
  }

  // store -> load reproduces an equal config, and the file is stable text without a timestamp.
  @Test
  void fileRoundTrip(@TempDir Path dir) throws Exception {
    ClusterConfig c = everythingChanged();
    Path file = dir.resolve("sub/node2.properties");
    c.store(file);
    assertThat(ClusterConfig.load(file)).isEqualTo(c);
    String first = Files.readString(file, UTF_8);
    c.store(file);
    assertThat(Files.readString(file, UTF_8)).isEqualTo(first);
    assertThat(
            first.lines().filter(l -> !l.startsWith("#")).map(l -> l.substring(0, l.indexOf('='))))
        .startsWith("cluster.name", "node.id", "peers", "storage.dir");
    assertThat(dir.resolve("sub")).isDirectoryNotContaining("glob:**.tmp");
  }

  // Characters that are special in properties syntax survive store -> load, and peers stay
  // readable.
  @Test
  void fileRoundTripKeepsSpecialCharacters(@TempDir Path dir) throws Exception {
    ClusterConfig c =
        ClusterConfig.localDefaults()
            .withNodeId("n1")
            .withStorageDir(Path.of("/srv/fk data/#1=a:b!\\x/\u00e9t\u00e9"));
    Path file = dir.resolve("c.properties");
    c.store(file);
    assertThat(ClusterConfig.load(file)).isEqualTo(c);
    assertThat(Files.readString(file, UTF_8))
        .contains("peers=n1@127.0.0.1:7301,n2@127.0.0.1:7302,");
  }

  // Keys left out take the documented defaults.
  @Test
  void defaults() {
    ClusterConfig c = ClusterConfig.fromProperties(props());
    assertThat(c.clusterName()).isEqualTo("fencekeeper");
    assertThat(c.nodeId()).isEmpty();
    assertThat(c.storageDir()).isEqualTo(Path.of("./data"));
    assertThat(c.limits()).isEqualTo(Limits.defaults());
    assertThat(c.snapshotAutoTriggerEntries()).isEqualTo(10_000);
    assertThat(c.electionTimeoutMin()).isEqualTo(Duration.ofMillis(400));
    assertThat(c.electionTimeoutMax()).isEqualTo(Duration.ofMillis(800));
    assertThat(c.requestTimeout()).isEqualTo(Duration.ofSeconds(3));
    assertThat(c.clockOffsetMs()).isZero();
    assertThat(c.metricsPort()).isZero();
    assertThat(c.overload().maxPendingReads()).isEqualTo(4096);
    assertThat(c).isEqualTo(ClusterConfig.localDefaults());
  }

  // localDefaults is three nodes n1..n3 on 127.0.0.1 from 7301, and local() shifts only the ports.
  @Test
  void localClusters() {
    assertThat(ClusterConfig.localDefaults().peers())
        .containsExactly(
            new PeerAddress("n1", "127.0.0.1", 7301),
            new PeerAddress("n2", "127.0.0.1", 7302),
            new PeerAddress("n3", "127.0.0.1", 7303));
    assertThat(ClusterConfig.local(17000).peers())
        .extracting(PeerAddress::port)
        .containsExactly(17000, 17001, 17002);
    assertThat(ClusterConfig.local(17000).clusterName())
        .isEqualTo(ClusterConfig.localDefaults().clusterName());
    assertThatThrownBy(() -> ClusterConfig.local(65534))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("65534");
  }

  // Without storage.dir each node gets its own ./data/<node.id>, so a local cluster's nodes never
  // share a dir.
  @Test
  void storageDirFollowsNodeIdUnlessSet() {
    ClusterConfig local = ClusterConfig.localDefaults();
    assertThat(local.withNodeId("n1").storageDir()).isEqualTo(Path.of("./data/n1"));
    assertThat(local.withNodeId("n2").storageDir()).isEqualTo(Path.of("./data/n2"));
    assertThat(local.withStorageDir(Path.of("/srv/fk")).withNodeId("n2").storageDir())
        .isEqualTo(Path.of("/srv/fk"));
  }

  static Stream<Arguments> badInputs() {
    return Stream.of(
        Arguments.of("bad duration", Map.of("lease.ttl.min", "5x"), "lease.ttl.min", "'5x'"),
        Arguments.of(
            "unitless duration",
            Map.of("client.request.timeout", "3000"),
            "client.request.timeout",
            "'3000'"),
        Arguments.of(
            "negative size",
            Map.of("limits.value.max-bytes", "-1"),
            "limits.value.max-bytes",
            "'-1'"),
        Arguments.of(
            "zero count",
            Map.of("limits.keys-per-write.max", "0"),
            "limits.keys-per-write.max",
            "'0'"),
        Arguments.of(
            "bad size unit",
            Map.of("limits.key.max-bytes", "12kb"),
            "limits.key.max-bytes",
            "'12kb'"),
        Arguments.of(
            "size over int",
            Map.of("limits.value.max-bytes", "4096MiB"),
            "limits.value.max-bytes",
            "'4096MiB'"),
        Arguments.of("min > max TTL", Map.of("lease.ttl.min", "2h"), "lease.ttl.min", "'2h'"),
        Arguments.of("zero TTL", Map.of("lease.ttl.max", "0ms"), "lease.ttl.max", "'0ms'"),
        Arguments.of("unknown key", Map.of("lease.ttl.mni", "5s"), "lease.ttl.mni", "'5s'"),
        Arguments.of(
            "duplicate peer id",
            Map.of("peers", "n1@127.0.0.1:7301,n1@127.0.0.1:7302"),
            "peers",
            "'n1'"),
        Arguments.of(
            "duplicate address",
            Map.of("peers", "n1@127.0.0.1:7301,n2@127.0.0.1:7301"),
            "peers",
            "127.0.0.1:7301"),
        Arguments.of("node.id not a peer", Map.of("node.id", "n9"), "node.id", "'n9'"),
        Arguments.of("port out of range", Map.of("peers", "n1@127.0.0.1:70000"), "peers", "70000"),
        Arguments.of("port not a number", Map.of("peers", "n1@127.0.0.1:73o1"), "peers", "'73o1'"),
        Arguments.of(
            "peer without port", Map.of("peers", "n1@127.0.0.1"), "peers", "'n1@127.0.0.1'"),
        Arguments.of(
            "peer without id", Map.of("peers", "127.0.0.1:7301"), "peers", "'127.0.0.1:7301'"),
        Arguments.of(
            "empty peer entry", Map.of("peers", "n1@h:1,,n2@h:2"), "peers", "'n1@h:1,,n2@h:2'"),
        Arguments.of("bad peer id", Map.of("peers", "n/1@h:1"), "peers", "'n/1'"),
        Arguments.of(
            "election max <= min",
            Map.of("raft.election.timeout.max", "400ms"),
            "raft.election.timeout.max",
            "'400ms'"),
        Arguments.of(
            "zero snapshot trigger",
            Map.of("snapshot.auto-trigger.entries", "0"),
            "snapshot.auto-trigger.entries",
            "'0'"),
        Arguments.of(
            "metrics port range", Map.of("metrics.port", "65536"), "metrics.port", "'65536'"),
        Arguments.of(
            "metrics port on Raft port",
            Map.of("node.id", "n1", "metrics.port", "7302"),
            "metrics.port",
            "'7302'"),
        Arguments.of(
            "clock offset too far", Map.of("clock.offset", "25h"), "clock.offset", "'25h'"),
        Arguments.of(
            "cluster name", Map.of("cluster.name", "my cluster"), "cluster.name", "'my cluster'"),
        Arguments.of("empty value", Map.of("storage.dir", " "), "storage.dir", "is empty"),
        Arguments.of(
            "zero pending reads",
            Map.of("overload.pending-reads.max", "0"),
            "overload.pending-reads.max",
            "'0'"));
  }

  // Each bad setting is rejected with a message naming both the key and the offending value.
  @ParameterizedTest(name = "{0}")
  @MethodSource("badInputs")
  void badInputNamesKeyAndValue(
      String description, Map<String, String> settings, String key, String fragment) {
    Properties p = props();
    settings.forEach(p::setProperty);
    assertThatThrownBy(() -> ClusterConfig.fromProperties(p))
        .as(description)
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(key)
        .hasMessageContaining(fragment);
  }

  // Guarantee: the stuck-follower bound defaults to 20 s, takes 0 (Ratis's own appender) and
  // refuses a negative value naming the key.
  @Test
  void stuckFollowerRestartAfterTakesZeroButNotANegativeValue() {
    assertThat(ClusterConfig.fromProperties(props()).stuckFollowerRestartAfter())
        .isEqualTo(Duration.ofSeconds(20));
    assertThat(
            ClusterConfig.fromProperties(props("raft.stuck-follower.restart-after", "0ms"))
                .stuckFollowerRestartAfter())
        .isZero();
    assertThatThrownBy(
            () -> ClusterConfig.fromProperties(props("raft.stuck-follower.restart-after", "-1s")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("raft.stuck-follower.restart-after");
  }

  // A missing peers key is an error, not a silent single-host default.
  @Test
  void peersAreRequired() {
    assertThatThrownBy(() -> ClusterConfig.fromProperties(new Properties()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("peers: missing");
  }

  // A near-miss typo gets the intended key suggested.
  @Test
  void unknownKeySuggestsClosestKey() {
    assertThatThrownBy(() -> ClusterConfig.fromProperties(props("lease.tll.max", "5m")))
        .hasMessageContaining("did you mean 'lease.ttl.max'");
  }

  // All bad keys are reported in one go, so fixing a file takes one round trip.
  @Test
  void reportsEveryProblemAtOnce() {
    assertThatThrownBy(
            () ->
                ClusterConfig.fromProperties(props("lease.ttl.min", "5x", "metrics.port", "http")))
        .hasMessageContaining("2 problems")
        .hasMessageContaining("lease.ttl.min: '5x'")
        .hasMessageContaining("metrics.port: 'http'");
  }

  // An unreadable file is reported with its path.
  @Test
  void loadNamesUnreadableFile(@TempDir Path dir) {
    Path missing = dir.resolve("nope.properties");
    assertThatThrownBy(() -> ClusterConfig.load(missing))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(missing.toString());
  }

  // Validation errors from a file name the file as well as the key and value.
  @Test
  void loadNamesFileOnInvalidContent(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("node1.properties");
    Files.writeString(file, "peers=" + PEERS + "\nlease.ttl.min=5x\n", UTF_8);
    assertThatThrownBy(() -> ClusterConfig.load(file))
        .hasMessageContaining(file.toString())
        .hasMessageContaining("lease.ttl.min: '5x'");
  }

  // A key set twice in a file is an error rather than last-one-wins.
  @Test
  void loadRejectsKeySetTwice(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("node1.properties");
    Files.writeString(file, "peers=" + PEERS + "\nlease.ttl.max=1m\nlease.ttl.max=2m\n", UTF_8);
    assertThatThrownBy(() -> ClusterConfig.load(file))
        .hasMessageContaining("lease.ttl.max")
        .hasMessageContaining("'1m'")
        .hasMessageContaining("'2m'");
  }

  // Trailing blanks, invisible in an editor, do not change a value's meaning.
  @Test
  void valuesAreTrimmed(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("node1.properties");
    Files.writeString(
        file, "peers = " + PEERS + "  \nnode.id = n1\t\nlease.ttl.max = 2m \n", UTF_8);
    ClusterConfig c = ClusterConfig.load(file);
    assertThat(c.self().id()).isEqualTo("n1");
    assertThat(c.limits().maxTtl()).isEqualTo(Duration.ofMinutes(2));
  }

  // A server cannot be configured without knowing which peer it is.
  @Test
  void serverPropertiesRequireNodeId() {
    assertThatThrownBy(() -> ClusterConfig.localDefaults().self())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("node.id: missing")
        .hasMessageContaining("n1");
    assertThatThrownBy(() -> ClusterConfig.localDefaults().withNodeId("n4"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("'n4'");
  }

  // --peers accepts bare host:port (ids n1, n2, ... in order) or explicit ids, but not a mix.
  @Test
  void forPeersParsing() {
    assertThat(ClusterConfig.forPeers("127.0.0.1:7301, 127.0.0.1:7302").peers())
        .containsExactly(
            new PeerAddress("n1", "127.0.0.1", 7301), new PeerAddress("n2", "127.0.0.1", 7302));
    assertThat(ClusterConfig.forPeers("a@h1:1,b@h2:2").peers())
        .containsExactly(new PeerAddress("a", "h1", 1), new PeerAddress("b", "h2", 2));
    assertThat(ClusterConfig.forPeers("127.0.0.1:7301,127.0.0.1:7302,127.0.0.1:7303"))
        .isEqualTo(ClusterConfig.localDefaults());
    assertThatThrownBy(() -> ClusterConfig.forPeers("a@h1:1,h2:2"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("'a@h1:1,h2:2'")
        .hasMessageContaining("mixes");
    assertThatThrownBy(() -> ClusterConfig.forPeers("h1"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("'h1'");
    assertThatThrownBy(() -> ClusterConfig.forPeers(""))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("peers");
  }

  // with* copies are validated like files, so a drill cannot set an out-of-range knob.
  @Test
  void copiesAreValidated() {
    ClusterConfig c = ClusterConfig.localDefaults();
    assertThat(c.withClockOffsetMs(-3000).clockOffsetMs()).isEqualTo(-3000);
    assertThatThrownBy(() -> c.withClockOffsetMs(Long.MIN_VALUE))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("clock.offset");
    assertThatThrownBy(() -> c.withMetricsPort(-1))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("metrics.port")
        .hasMessageContaining("'-1'");
    assertThat(c.withMetricsPort(9100).metricsPort()).isEqualTo(9100);
  }

  // A node listens on its own peer host unless `bind` / `metrics.bind` say otherwise; the keys
  // survive a store/load round trip and a bad address names the key.
  @Test
  void bindAddresses() {
    ClusterConfig node = ClusterConfig.fromProperties(props("node.id", "n2"));
    assertThat(node.bindHost()).isEqualTo(node.self().host());
    assertThat(node.metricsBindHost()).isEqualTo(node.self().host());

    ClusterConfig open =
        ClusterConfig.fromProperties(
            props("node.id", "n2", "bind", "0.0.0.0", "metrics.bind", "::"));
    assertThat(open.bindHost()).isEqualTo("0.0.0.0");
    assertThat(open.metricsBindHost()).isEqualTo("::");
    assertThat(ClusterConfig.fromProperties(open.toProperties())).isEqualTo(open);
    assertThat(node.withBindHost("10.0.0.7").metricsBindHost()).isEqualTo("10.0.0.7");

    assertThatThrownBy(
            () -> ClusterConfig.fromProperties(props("node.id", "n2", "bind", "10.0.0.1:7301")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("bind: '10.0.0.1:7301'");
    assertThatThrownBy(() -> ClusterConfig.fromProperties(props("metrics.bind", "a host")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("metrics.bind");
  }

  // Server settings from FENCEKEEPER_<KEY> variables: they override the file key by key, make a
  // whole config without one, leave non-key FENCEKEEPER_ variables alone, and a bad value names its
  // variable.
  @Test
  void environmentVariablesSetAndOverrideKeys(@TempDir Path dir) {
    assertThat(ClusterConfig.environmentVariable("limits.value.max-bytes"))
        .isEqualTo("FENCEKEEPER_LIMITS_VALUE_MAX_BYTES");
    assertThat(ClusterConfig.environmentVariables())
        .doesNotHaveDuplicates()
        .contains(
            "FENCEKEEPER_NODE_ID",
            "FENCEKEEPER_PEERS",
            "FENCEKEEPER_STORAGE_DIR",
            "FENCEKEEPER_BIND",
            "FENCEKEEPER_METRICS_PORT");

    Path file = dir.resolve("node.properties");
    ClusterConfig.fromProperties(props("node.id", "n1", "metrics.port", "9301")).store(file);
    ClusterConfig overridden =
        ClusterConfig.load(
            file,
            Map.of(
                "FENCEKEEPER_NODE_ID",
                "n2",
                "FENCEKEEPER_BIND",
                "0.0.0.0",
                "FENCEKEEPER_DATA_DIR",
                "/not/a/key"));
    assertThat(overridden.self().id()).isEqualTo("n2");
    assertThat(overridden.bindHost()).isEqualTo("0.0.0.0");
    assertThat(overridden.metricsPort()).isEqualTo(9301); // from the file
    assertThat(ClusterConfig.load(file, Map.of())).isEqualTo(ClusterConfig.load(file));

    // Guarantee: a node takes its members only from its file: FENCEKEEPER_PEERS and
    // FENCEKEEPER_ENDPOINTS, exported for clients, change nothing (a new node n4 was refused as
    // "not one of the peers" when they did).
    ClusterConfig.fromProperties(
            props("node.id", "n4", "peers", PEERS + ",n4@127.0.0.1:7304", "metrics.port", "9304"))
        .store(dir.resolve("n4.properties"));
    ClusterConfig n4 =
        ClusterConfig.load(
            dir.resolve("n4.properties"),
            Map.of(
                "FENCEKEEPER_PEERS",
                PEERS,
                "FENCEKEEPER_ENDPOINTS",
                "127.0.0.1:7501",
                "FENCEKEEPER_STORAGE_DIR",
                "/var/lib/fencekeeper"));
    assertThat(n4.self().id()).isEqualTo("n4");
    assertThat(n4.peers()).hasSize(4);
    assertThat(n4.endpoints()).isEmpty();
    assertThat(n4.storageDir()).isEqualTo(Path.of("/var/lib/fencekeeper"));
    assertThatThrownBy(
            () ->
                ClusterConfig.load(
                    null, Map.of("FENCEKEEPER_PEERS", PEERS, "FENCEKEEPER_NODE_ID", "n3")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("peers: missing");

    assertThatThrownBy(() -> ClusterConfig.load(file, Map.of("FENCEKEEPER_METRICS_PORT", "nine")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("FENCEKEEPER_METRICS_PORT")
        .hasMessageContaining("metrics.port: 'nine'");
    assertThatThrownBy(() -> ClusterConfig.load(null, Map.of("FENCEKEEPER_BASE_PORT", "7301")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("no config: give a properties file with peers");
  }

  // Every key is written by toProperties (or left out only when it has no value), and what is
  // written reads back to the same value: writing and reading derive from one key list.
  @Test
  void everyKeyIsWrittenAndReadBack(@TempDir Path dir) throws Exception {
    ClusterConfig c =
        everythingChanged()
            .withBindHost("0.0.0.0")
            .withMetricsBindHost("::1")
            .withSecurity(
                Security.none()
                    .withAdmins(java.util.Set.of("ops", "alice"))
                    .withTls(
                        new Security.TlsFiles(
                            Files.createFile(dir.resolve("n.crt")),
                            Files.createFile(dir.resolve("n.key")),
                            Files.createFile(dir.resolve("ca.crt")))));
    Properties p = c.toProperties();
    // endpoints is a client's key, which a node's config cannot have.
    assertThat(p.stringPropertyNames())
        .containsExactlyInAnyOrderElementsOf(
            Keys.NAMES.stream().filter(k -> !k.equals("endpoints")).toList());
    assertThat(p.getProperty("authz.admins")).isEqualTo("alice,ops");
    assertThat(ClusterConfig.fromProperties(p)).isEqualTo(c);
    assertThat(c.toString()).contains("tls.trust=" + dir.resolve("ca.crt"), "bind=0.0.0.0");

    ClusterConfig client = ClusterConfig.forEndpoints("10.0.0.1:7501,[::1]:7502");
    Properties written = client.toProperties();
    assertThat(written.getProperty("endpoints")).isEqualTo("10.0.0.1:7501,[::1]:7502");
    assertThat(ClusterConfig.fromProperties(written)).isEqualTo(client);
  }

  // Guarantee: a client's config names the nodes' client ports (endpoints) and needs no Raft
  // peers; clients connect to exactly those ports.
  @Test
  void aClientConfigNamesEndpoints() {
    Properties p = new Properties();
    p.setProperty("endpoints", "10.0.0.1:7501, 10.0.0.2:7501,10.0.0.3:7601");
    ClusterConfig c = ClusterConfig.fromProperties(p);
    assertThat(c.peers()).isEmpty();
    assertThat(c.clientAddresses().stream().map(PeerAddress::address))
        .containsExactly("10.0.0.1:7501", "10.0.0.2:7501", "10.0.0.3:7601");
    assertThat(c.endpoints()).isEqualTo(c.clientAddresses());
    // Without endpoints, the client ports follow from peers by the default rule.
    assertThat(
            ClusterConfig.forPeers("n1@10.0.0.1:7301").clientAddresses().stream()
                .map(PeerAddress::address))
        .containsExactly("10.0.0.1:7501");
  }

  // Guarantee: a Raft address given where a client endpoint belongs is refused at once, with the
  // client port to give instead; a node's config cannot name endpoints, nor do without peers.
  @Test
  void aRaftAddressIsNoEndpoint() {
    assertThatThrownBy(() -> ClusterConfig.forEndpoints("n1@127.0.0.1:7301,n2@127.0.0.1:7302"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "endpoints: 'n1@127.0.0.1:7301' is a Raft peer address (id@host:port), which only"
                + " nodes use; give its client port instead: 127.0.0.1:7501 (Raft port + 200"
                + " unless the node sets client.port)");
    assertThatThrownBy(() -> ClusterConfig.forEndpoints("127.0.0.1"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("has no port");
    assertThatThrownBy(() -> ClusterConfig.forEndpoints("a:1,,b:2"))
        .hasMessageContaining("empty entry at position 2");

    Properties node = new Properties();
    node.setProperty("node.id", "n1");
    node.setProperty("endpoints", "127.0.0.1:7501");
    assertThatThrownBy(() -> ClusterConfig.fromProperties(node))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("peers: missing");
    node.setProperty("peers", "n1@127.0.0.1:7301");
    assertThatThrownBy(() -> ClusterConfig.fromProperties(node))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("endpoints: is for clients");
  }

  // Guarantee: the JSON gateway sits at the Raft port + 300 unless told otherwise, 0 turns it off,
  // and a follower finds the leader's gateway by the same rule.
  @Test
  void httpPortDefaultsBesideTheRaftPortAndCanBeMovedOrTurnedOff() {
    ClusterConfig n2 = ClusterConfig.fromProperties(props("node.id", "n2"));
    assertThat(n2.httpPort()).isEqualTo(7602);
    assertThat(n2.httpBindHost()).isEqualTo("127.0.0.1");
    assertThat(n2.httpAddressOf("n3")).hasValue("127.0.0.1:7603");
    assertThat(n2.httpAddressOf("n9")).isEmpty();

    ClusterConfig moved =
        ClusterConfig.fromProperties(
            props("node.id", "n2", "http.port", "8080", "http.bind", "0.0.0.0"));
    assertThat(moved.httpPort()).isEqualTo(8080);
    assertThat(moved.httpBindHost()).isEqualTo("0.0.0.0");
    assertThat(moved.httpAddressOf("n2")).hasValue("127.0.0.1:8080");
    assertThat(moved.httpAddressOf("n1")).hasValue("127.0.0.1:7601");
    assertThat(ClusterConfig.fromProperties(moved.toProperties())).isEqualTo(moved);

    ClusterConfig off = ClusterConfig.fromProperties(props("node.id", "n2", "http.port", "0"));
    assertThat(off.httpPort()).isZero();
    assertThat(off.httpAddressOf("n2")).isEmpty();
  }

  @Test
  void anHttpPortThatIsAlreadyTakenOnTheHostIsRefused() {
    assertThatThrownBy(
            () -> ClusterConfig.fromProperties(props("node.id", "n1", "http.port", "7303")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("http.port: '7303' is already the Raft port of peer n3");
    assertThatThrownBy(
            () ->
                ClusterConfig.fromProperties(
                    props("node.id", "n1", "http.port", "9100", "metrics.port", "9100")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("http.port: '9100' is already metrics.port");
    assertThatThrownBy(() -> ClusterConfig.fromProperties(props("http.port", "70000")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("http.port");
  }
}
