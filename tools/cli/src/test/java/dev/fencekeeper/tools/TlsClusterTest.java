package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingAdmin;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.FencingException;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.config.Security;
import dev.fencekeeper.metrics.NodeMetric;
import dev.fencekeeper.proto.BackupRequest;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.server.FencekeeperServer;
import dev.fencekeeper.server.RaftConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A three-node cluster with mutual TLS in which n3 holds a certificate from another CA: n1 and n2
 * form the majority and serve; n3 can never join in. Clients with a valid certificate work;
 * plaintext, expired and foreign-CA clients are refused; admin operations need the admin identity;
 * leases belong to whoever acquired them.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TlsClusterTest {
  private static final Duration SHORT_TIMEOUT = Duration.ofMillis(400);

  @TempDir static Path dir;
  private Path certs;
  private Path foreign;
  private ClusterConfig cluster;
  private final List<FencekeeperServer> servers = new ArrayList<>();

  @BeforeAll
  void start() throws IOException {
    certs = dir.resolve("certs");
    Certificates ca = Certificates.writeLocalSet(certs, Duration.ofDays(1));
    Instant now = Instant.now();
    ca.issue(certs, "client2", "second-client", now.minusSeconds(60), now.plus(Duration.ofDays(1)));
    ca.issue(
        certs,
        "expired",
        Certificates.CLIENT_CN,
        now.minus(Duration.ofDays(2)),
        now.minus(Duration.ofDays(1)));
    // Another CA, with certificates carrying the very CNs the cluster trusts: only the CA differs.
    foreign = dir.resolve("foreign");
    Certificates.writeLocalSet(foreign, Duration.ofDays(1));

    Properties p = new Properties();
    p.setProperty(
        "peers",
        "n1@127.0.0.1:"
            + LocalPorts.freeNodePort()
            + ",n2@127.0.0.1:"
            + LocalPorts.freeNodePort()
            + ",n3@127.0.0.1:"
            + LocalPorts.freeNodePort());
    p.setProperty("authz.admins", Certificates.ADMIN_CN);
    p.setProperty("authz.nodes", Certificates.NODE_CN);
    cluster = ClusterConfig.fromProperties(p);
    for (PeerAddress peer : cluster.peers()) {
      Path from = peer.id().equals("n3") ? foreign : certs;
      ClusterConfig node =
          withTls(cluster, from, Certificates.NODE)
              .withNodeId(peer.id())
              .withStorageDir(dir.resolve(peer.id()));
      servers.add(FencekeeperServer.start(node));
    }
    await().atMost(Duration.ofSeconds(60)).until(() -> servers.stream().anyMatch(this::leads));
  }

  @AfterAll
  void stop() throws IOException {
    for (FencekeeperServer s : servers) {
      s.close();
    }
  }

  @Test
  void aClientWithAValidCertificateWorks() {
    try (FencingClient client =
        FencingClient.connect(withTls(cluster, certs, Certificates.CLIENT), "ok")) {
      Result granted = client.acquireToken("tls-ok", Duration.ofSeconds(30), "ok");
      assertThat(granted.code()).isEqualTo(dev.fencekeeper.client.ResultCode.GRANTED);
      assertThat(
              client
                  .write("tls-ok", granted.token(), "k", "v".getBytes(StandardCharsets.UTF_8))
                  .code())
          .isEqualTo(dev.fencekeeper.client.ResultCode.ACCEPTED);
      assertThat(client.read("tls-ok", "k").valueAsString()).isEqualTo("v");
      // Node info and stale reads use per-node clients: those must speak TLS too.
      assertThat(Wire.nodeInfo(client, cluster.peers().get(0).id(), Duration.ofSeconds(20)).getId())
          .isEqualTo(cluster.peers().get(0).id());
    }
  }

  @Test
  void plaintextExpiredAndForeignClientsAreRefused() {
    ClusterConfig plaintext = quick(cluster);
    ClusterConfig expired = quick(withTls(cluster, certs, "expired"));
    // Trusts the right CA (so it could verify the nodes) but presents a certificate from another
    // one.
    ClusterConfig foreignCa =
        quick(
            cluster.withSecurity(
                cluster
                    .security()
                    .withTls(
                        new Security.TlsFiles(
                            foreign.resolve("client.crt"),
                            foreign.resolve("client.key"),
                            certs.resolve("ca.crt")))));
    for (ClusterConfig refused : List.of(plaintext, expired, foreignCa)) {
      try (FencingClient client = FencingClient.connect(refused, "intruder")) {
        Result r = client.acquireToken("tls-refused", Duration.ofSeconds(30), "intruder");
        assertThat(r.code())
            .as(refused.toString())
            .isEqualTo(
                refused == plaintext
                    ? dev.fencekeeper.client.ResultCode.UNAVAILABLE
                    : dev.fencekeeper.client.ResultCode.PERMISSION_DENIED);
      }
    }
    try (FencingClient client =
        FencingClient.connect(withTls(cluster, certs, Certificates.CLIENT), "check")) {
      assertThat(client.lease("tls-refused").code())
          .isEqualTo(dev.fencekeeper.client.ResultCode.NOT_FOUND);
    }
  }

  // Guarantee: a client the nodes refuse at the TLS handshake (a certificate another CA issued, an
  // expired one), or one that refuses the node's certificate (a CA it does not trust, a name the
  // certificate does not carry), is told it is a TLS failure and what failed, as PERMISSION_DENIED
  // with nothing applied, within about the dial time: the refusal is final, not retried.
  @Test
  void aRefusedHandshakeIsReportedAsWhatItIs() throws Exception {
    ClusterConfig expired = withTls(cluster, certs, "expired");
    ClusterConfig foreignCa =
        cluster.withSecurity(
            cluster
                .security()
                .withTls(
                    new Security.TlsFiles(
                        foreign.resolve("client.crt"),
                        foreign.resolve("client.key"),
                        certs.resolve("ca.crt"))));
    // Trusts only the other CA, so it cannot verify the nodes.
    ClusterConfig untrustedNodes =
        cluster.withSecurity(
            cluster
                .security()
                .withTls(
                    new Security.TlsFiles(
                        certs.resolve("client.crt"),
                        certs.resolve("client.key"),
                        foreign.resolve("ca.crt"))));
    java.util.Map<ClusterConfig, String> cases = new java.util.LinkedHashMap<>();
    cases.put(expired, "refused this client's certificate");
    cases.put(foreignCa, "refused this client's certificate");
    cases.put(untrustedNodes, "not signed by a CA this client trusts");
    // The machine's own name, when it resolves to this loopback address, dials the nodes by a name
    // their certificates (127.0.0.1, localhost) do not carry.
    String hostName = java.net.InetAddress.getLocalHost().getHostName();
    if (!hostName.equals("localhost")
        && java.net.InetAddress.getByName(hostName).getHostAddress().equals("127.0.0.1")) {
      Properties p = withTls(cluster, certs, Certificates.CLIENT).toProperties();
      p.setProperty("peers", p.getProperty("peers").replace("127.0.0.1", hostName));
      cases.put(ClusterConfig.fromProperties(p), "does not name the host");
    }
    for (java.util.Map.Entry<ClusterConfig, String> c : cases.entrySet()) {
      try (FencingClient client = FencingClient.connect(c.getKey(), "intruder")) {
        long started = System.nanoTime();
        Result r = client.acquireToken("tls-told", Duration.ofSeconds(30), "intruder");
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        assertThat(r.code())
            .as(c.getValue() + ": " + r)
            .isEqualTo(dev.fencekeeper.client.ResultCode.PERMISSION_DENIED);
        assertThat(r.message())
            .contains("TLS handshake")
            .contains(c.getValue())
            .contains("nothing was applied")
            .doesNotContain("may or may not");
        assertThat(took).as(r.message()).isLessThan(Duration.ofMillis(2_500));
      }
    }
    // The command line uses the client: a refused handshake is one final answer, not 15 s of
    // retries.
    String peers =
        cluster.peers().stream()
            .map(PeerAddress::toString)
            .collect(java.util.stream.Collectors.joining(","));
    long cliStarted = System.nanoTime();
    CliRun cli =
        CliRun.run(
            dir,
            "lease",
            "acquire",
            "tls-cli-expired",
            "--ttl",
            "30s",
            "--peers",
            peers,
            "--tls",
            "--certs",
            certs.toString(),
            "--identity",
            "expired");
    Duration cliTook = Duration.ofNanos(System.nanoTime() - cliStarted);
    assertThat(cli.exitCode()).as(cli.toString()).isEqualTo(ExitCode.PERMISSION_DENIED.code());
    assertThat(cli.toString()).contains("expired").contains("nothing was applied");
    assertThat(cliTook).as(cli.toString()).isLessThan(Duration.ofSeconds(5));
    try (FencingClient client = FencingClient.connect(cluster, "no-certificate")) {
      long started = System.nanoTime();
      Result r = client.acquireToken("tls-told", Duration.ofSeconds(30), "no-certificate");
      Duration took = Duration.ofNanos(System.nanoTime() - started);
      assertThat(r.code()).isEqualTo(dev.fencekeeper.client.ResultCode.UNAVAILABLE);
      assertThat(r.message()).contains("this client has no certificate");
      // The unreachable bound (3 s) and the retries' pacing, well inside the call's 30 s; a loaded
      // machine stretches the attempts.
      assertThat(took).as(r.message()).isLessThan(Duration.ofSeconds(15));
    }
  }

  @Test
  void aNodeWithAForeignCertificateNeverJoinsIn() {
    try (FencingClient client =
        FencingClient.connect(withTls(cluster, certs, Certificates.CLIENT), "n3-check")) {
      assertThat(client.acquireToken("tls-n3", Duration.ofSeconds(30), "n3-check").code())
          .isEqualTo(dev.fencekeeper.client.ResultCode.GRANTED);
    }
    FencekeeperServer n3 = servers.get(2);
    assertThat(leads(n3)).isFalse();
    boolean n3HasIt = n3.stateMachine().read(state -> state.resources().containsKey("tls-n3"));
    assertThat(n3HasIt).isFalse();
    long majorityApplied = Math.min(appliedIndex(servers.get(0)), appliedIndex(servers.get(1)));
    assertThat(appliedIndex(n3)).isLessThan(majorityApplied);
  }

  @Test
  void adminOperationsNeedTheAdminIdentityAndRefusalsAreCounted() {
    long deniedBefore = denied();
    ClusterConfig asClient = withTls(cluster, certs, Certificates.CLIENT);
    ClusterConfig asAdmin = withTls(cluster, certs, Certificates.ADMIN);
    try (FencingClient holder = FencingClient.connect(asClient, "holder");
        FencingClient admin = FencingClient.connect(asAdmin, "admin")) {
      assertThat(holder.acquireToken("tls-revoke", Duration.ofSeconds(30), "holder").code())
          .isEqualTo(dev.fencekeeper.client.ResultCode.GRANTED);
      Result revoke = holder.revoke("tls-revoke", "not mine to revoke");
      assertThat(revoke.code()).isEqualTo(dev.fencekeeper.client.ResultCode.PERMISSION_DENIED);
      assertThat(revoke.message()).contains(Certificates.CLIENT_CN).contains("authz.admins");
      assertThat(holder.lease("tls-revoke").live()).isTrue();
      assertThat(holder.backup(dir.resolve("denied.backup")).code())
          .isEqualTo(dev.fencekeeper.client.ResultCode.PERMISSION_DENIED);

      assertThatThrownBy(
              () -> FencingAdmin.connect(asClient).snapshot("n1", Duration.ofSeconds(10)))
          .isInstanceOfSatisfying(
              FencingException.class,
              e ->
                  assertThat(e.code())
                      .isEqualTo(dev.fencekeeper.client.ResultCode.PERMISSION_DENIED));
      assertThatThrownBy(() -> FencingAdmin.connect(asClient).removeMember("n3"))
          .isInstanceOfSatisfying(
              FencingException.class,
              e ->
                  assertThat(e.code())
                      .isEqualTo(dev.fencekeeper.client.ResultCode.PERMISSION_DENIED));
      assertThatThrownBy(() -> FencingAdmin.connect(asClient).transferLeadershipToAnother())
          .isInstanceOfSatisfying(
              FencingException.class,
              e ->
                  assertThat(e.code())
                      .isEqualTo(dev.fencekeeper.client.ResultCode.PERMISSION_DENIED));
      assertThat(FencingAdmin.connect(asClient).members())
          .hasSize(3); // reading the membership is allowed

      assertThat(admin.revoke("tls-revoke", "operator").code())
          .isEqualTo(dev.fencekeeper.client.ResultCode.REVOKED);
      assertThat(FencingAdmin.connect(asAdmin).snapshot("n1", Duration.ofSeconds(30))).isPositive();
    }
    assertThat(denied() - deniedBefore).isGreaterThanOrEqualTo(5);
  }

  // Guarantee: the JSON gateway holds HTTP clients to the client port's TLS: the reference's curl
  // line with a client certificate is answered, no certificate gets no answer, and the
  // certificate's CN is the identity the service judges (admin authorization, lease ownership).
  @Test
  void theGatewayServesTlsClientsAsTheClientPortDoes() throws Exception {
    FencekeeperServer leader = servers.stream().filter(this::leads).findFirst().orElseThrow();
    String gateway = "127.0.0.1:" + leader.gateway().orElseThrow().port();
    String page = Files.readString(ExitCodeTest.repoRoot().resolve("docs/http-gateway.md"));
    String tls = page.substring(page.indexOf("## TLS"));
    String documented =
        tls.substring(tls.indexOf("```\n") + 4, tls.indexOf("\n```", tls.indexOf("```\n") + 4));
    String curl =
        documented.replace("certs/", certs + "/").replace("127.0.0.1:7601", gateway)
            + " -w ' HTTP %{http_code}'";
    assertThat(bash(curl)).startsWith("{\"status\":\"NOT_FOUND\"").endsWith(" HTTP 404");

    String anonymous =
        "curl -s --cacert " + certs.resolve("ca.crt") + " https://" + gateway + "/v1/node/status";
    assertThat(bash(anonymous + " || echo refused: $?")).startsWith("refused: ");

    String asClient = clientCurl("client", gateway);
    String asOther = clientCurl("client2", gateway);
    String asAdmin = clientCurl("admin", gateway);
    String granted =
        bash(asClient + "/v1/leases/acquire -d '{\"resource\":\"tls-gw\",\"ttlMs\":30000}'");
    assertThat(granted).startsWith("{\"status\":\"GRANTED\"");
    String token = granted.replaceAll(".*\"token\":\"(\\d+)\".*", "$1");
    assertThat(
            bash(
                asOther
                    + "/v1/leases/release -d '{\"resource\":\"tls-gw\",\"token\":\""
                    + token
                    + "\"}' -w ' HTTP %{http_code}'"))
        .startsWith("{\"status\":\"PERMISSION_DENIED\"")
        .endsWith(" HTTP 403");
    assertThat(
            bash(
                asClient
                    + "/v1/leases/revoke -d '{\"resource\":\"tls-gw\"}' -w ' HTTP %{http_code}'"))
        .contains(Certificates.CLIENT_CN)
        .endsWith(" HTTP 403");
    assertThat(bash(asAdmin + "/v1/leases/revoke -d '{\"resource\":\"tls-gw\"}'"))
        .startsWith("{\"status\":\"REVOKED\"");
  }

  private String clientCurl(String identity, String gateway) {
    return "curl -s --cacert "
        + certs.resolve("ca.crt")
        + " --cert "
        + certs.resolve(identity + ".crt")
        + " --key "
        + certs.resolve(identity + ".key")
        + " https://"
        + gateway;
  }

  private static String bash(String command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder("bash", "-c", command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    assertThat(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    return out;
  }

  @Test
  void onlyTheIdentityThatAcquiredALeaseMayRenewReleaseOrWriteWithIt() {
    try (FencingClient owner =
            FencingClient.connect(withTls(cluster, certs, Certificates.CLIENT), "owner");
        FencingClient other = FencingClient.connect(withTls(cluster, certs, "client2"), "other")) {
      Result granted = owner.acquireToken("tls-mine", Duration.ofSeconds(30), "owner");
      long token = granted.token();
      assertThat(other.renew("tls-mine", token, Duration.ofSeconds(30)).code())
          .isEqualTo(dev.fencekeeper.client.ResultCode.PERMISSION_DENIED);
      assertThat(other.release("tls-mine", token).code())
          .isEqualTo(dev.fencekeeper.client.ResultCode.PERMISSION_DENIED);
      assertThat(other.write("tls-mine", token, "k", new byte[] {1}).code())
          .isEqualTo(dev.fencekeeper.client.ResultCode.PERMISSION_DENIED);
      assertThat(owner.lease("tls-mine").live()).isTrue();
      assertThat(owner.renew("tls-mine", token, Duration.ofSeconds(30)).code())
          .isEqualTo(dev.fencekeeper.client.ResultCode.RENEWED);
      assertThat(owner.release("tls-mine", token).code())
          .isEqualTo(dev.fencekeeper.client.ResultCode.RELEASED);
    }
  }

  @Test
  void everyVerbTakesTlsAndAdminVerbsDefaultToTheAdminCertificate() {
    String peers =
        cluster.peers().stream()
            .map(PeerAddress::toString)
            .collect(java.util.stream.Collectors.joining(","));
    String dirArg = certs.toString();
    CliRun acquire =
        CliRun.run(
            dir, "lease", "acquire", "tls-cli", "--ttl", "30s", "--peers", peers, "--tls",
            "--certs", dirArg);
    assertThat(acquire.exitCode()).as(acquire.toString()).isEqualTo(ExitCode.SUCCESS.code());
    CliRun asClient =
        CliRun.run(
            dir,
            "lease",
            "revoke",
            "tls-cli",
            "--peers",
            peers,
            "--tls",
            "--certs",
            dirArg,
            "--identity",
            Certificates.CLIENT);
    assertThat(asClient.exitCode())
        .as(asClient.toString())
        .isEqualTo(ExitCode.PERMISSION_DENIED.code());
    CliRun asAdmin =
        CliRun.run(dir, "lease", "revoke", "tls-cli", "--peers", peers, "--tls", "--certs", dirArg);
    assertThat(asAdmin.exitCode()).as(asAdmin.toString()).isEqualTo(ExitCode.SUCCESS.code());
    CliRun snapshot =
        CliRun.run(
            dir,
            "snapshot",
            "create",
            "--peers",
            peers,
            "--tls",
            "--certs",
            dirArg,
            "--identity",
            Certificates.CLIENT);
    assertThat(snapshot.exitCode())
        .as(snapshot.toString())
        .isEqualTo(ExitCode.PERMISSION_DENIED.code());
  }

  // Guarantee: the Raft port serves peers only, with TLS too: a Ratis client holding even the
  // admin's certificate can read nothing there (not even a backup), while the admin moves
  // leadership over the client port.
  @Test
  void theRaftPortRefusesARatisClientEvenWithTheAdminCertificate() throws Exception {
    FencekeeperServer former = servers.stream().filter(this::leads).findFirst().orElseThrow();
    String formerId = former.config().self().id();
    String successor =
        servers.get(0) == former
            ? servers.get(1).config().self().id()
            : servers.get(0).config().self().id();
    ClusterConfig asAdmin = withTls(cluster, certs, Certificates.ADMIN);
    try (FencingAdmin admin = FencingAdmin.connect(asAdmin)) {
      assertThat(admin.transferLeadership(successor)).isEqualTo(successor);
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> !leads(former));

    Request backup = Request.newBuilder().setBackup(BackupRequest.getDefaultInstance()).build();
    // Ratis's client closes its stream on the refusal and reports that, not the node's words
    // (RaftPortPeersOnlyClusterTest checks them without TLS).
    assertThatThrownBy(() -> staleRead(asAdmin, formerId, backup))
        .isInstanceOf(java.util.concurrent.ExecutionException.class);
  }

  /** {@code request} as a stale read of node {@code peerId} through Ratis's client. */
  private static Response staleRead(ClusterConfig as, String peerId, Request request)
      throws Exception {
    try (RaftClient raw =
        RaftClient.newBuilder()
            .setRaftGroup(RaftConfig.group(as))
            .setProperties(RaftConfig.clientProperties(as))
            .setParameters(RaftConfig.parameters(as))
            .setRetryPolicy(RetryPolicies.noRetry())
            .build()) {
      RaftClientReply reply =
          raw.async()
              .sendStaleRead(
                  Message.valueOf(ByteString.copyFrom(request.toByteArray())),
                  0,
                  RaftPeerId.valueOf(peerId))
              .get(30, TimeUnit.SECONDS);
      return Response.parseFrom(reply.getMessage().getContent().toByteArray());
    }
  }

  private long denied() {
    long total = 0;
    for (FencekeeperServer s : servers) {
      total +=
          s.metrics().registry().counter(NodeMetric.REQUESTS_DENIED.dropwizardName()).getCount();
    }
    return total;
  }

  private static ClusterConfig withTls(ClusterConfig config, Path dir, String name) {
    return config.withSecurity(config.security().withTls(Security.TlsFiles.inDirectory(dir, name)));
  }

  /**
   * A short per-attempt timeout: a refused client's call fails fast instead of retrying for 15 s.
   */
  private static ClusterConfig quick(ClusterConfig config) {
    Properties p = config.toProperties();
    p.setProperty("client.request.timeout", SHORT_TIMEOUT.toMillis() + "ms");
    return ClusterConfig.fromProperties(p);
  }

  private boolean leads(FencekeeperServer s) {
    try {
      RaftServer.Division d = s.raftServer().getDivision(RaftConfig.groupId(s.config()));
      return d.getInfo().isLeader() && d.getInfo().isLeaderReady();
    } catch (IOException e) {
      return false;
    }
  }

  private static long appliedIndex(FencekeeperServer s) {
    return s.stateMachine().getLastAppliedTermIndex().getIndex();
  }
}
