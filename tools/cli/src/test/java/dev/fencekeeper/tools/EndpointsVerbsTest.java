package dev.fencekeeper.tools;

import static dev.fencekeeper.tools.CliRun.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fencekeeper.config.PeerAddress;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Client verbs address the cluster by its client endpoints; Raft addresses are refused there. */
class EndpointsVerbsTest {
  @RegisterExtension static final InProcessCluster cluster = InProcessCluster.perClass();

  private static String endpoints() {
    return cluster.config().clientAddresses().stream()
        .map(PeerAddress::address)
        .collect(Collectors.joining(","));
  }

  // Guarantee: with --endpoints or $FENCEKEEPER_ENDPOINTS alone, client and admin verbs work and
  // print nothing on stderr.
  @Test
  void verbsReachTheClusterByItsEndpoints() throws IOException {
    Path dir = cluster.dataDir();
    CliRun lease =
        CliRun.run(
            dir,
            "lease",
            "acquire",
            "by-endpoints",
            "--ttl",
            "1m",
            "-q",
            "--endpoints",
            endpoints());
    assertThat(lease.exitCode()).as(lease.toString()).isZero();
    Map<String, String> env = Map.of("FENCEKEEPER_ENDPOINTS", endpoints());
    CliRun write =
        CliRun.run(env, dir, "write", "by-endpoints", "k", "v", "--token", lease.line(), "--json");
    assertThat(json(write).get("status").asText()).as(write.toString()).isEqualTo("ACCEPTED");
    assertThat(write.err()).isEmpty();

    CliRun status = CliRun.run(env, dir, "status", "--json");
    JsonNode nodes = json(status).get("nodes");
    assertThat(status.exitCode()).as(status.toString()).isZero();
    assertThat(nodes).hasSize(3);
    // The ids are the nodes' own, as they answered.
    assertThat(nodes.findValuesAsText("id")).containsExactlyInAnyOrder("n1", "n2", "n3");

    CliRun members = CliRun.run(env, dir, "members", "list", "--json");
    assertThat(members.exitCode()).as(members.toString()).isZero();
    assertThat(members.err()).isEmpty();
  }

  // Guarantee: the deprecated --peers and $FENCEKEEPER_PEERS still work, with one warning line on
  // stderr, never in the --json object on stdout.
  @Test
  void peersStillWorkWithOneWarning() throws IOException {
    CliRun run =
        CliRun.run(
            Map.of("FENCEKEEPER_PEERS", cluster.peersWithIds()),
            cluster.dataDir(),
            "lease",
            "show",
            "nothing-here",
            "--json");
    assertThat(json(run).get("status").asText()).as(run.toString()).isEqualTo("NOT_FOUND");
    assertThat(run.err().lines())
        .singleElement()
        .asString()
        .contains("$FENCEKEEPER_PEERS", "deprecated", "$FENCEKEEPER_ENDPOINTS");

    CliRun flag = cluster.cli("lease", "show", "nothing-here");
    assertThat(flag.line()).as(flag.toString()).startsWith("NOT_FOUND");
    assertThat(flag.err().lines()).singleElement().asString().contains("--peers", "deprecated");
  }

  // Guarantee: a Raft address where an endpoint belongs is refused at once (usage, exit 2) with
  // one line naming the client port to use: no stack trace, no wait for a timeout.
  @Test
  void aRaftAddressIsRefusedAtOnce() {
    PeerAddress n1 = cluster.config().peers().get(0);
    long started = System.nanoTime();
    CliRun flag = CliRun.run(cluster.dataDir(), "lease", "show", "r", "--endpoints", n1.toString());
    CliRun env =
        CliRun.run(
            Map.of("FENCEKEEPER_ENDPOINTS", cluster.peersWithIds()),
            cluster.dataDir(),
            "write",
            "r",
            "k",
            "v",
            "--token",
            "1");
    Duration took = Duration.ofNanos(System.nanoTime() - started);

    String clientPort = "127.0.0.1:" + (n1.port() + 200);
    for (CliRun run : new CliRun[] {flag, env}) {
      assertThat(run.exitCode()).as(run.toString()).isEqualTo(ExitCode.USAGE.code());
      assertThat(run.out()).isEmpty();
      assertThat(run.err().lines())
          .as(run.toString())
          .singleElement()
          .asString()
          .contains("is a Raft peer address", clientPort);
    }
    assertThat(flag.err()).startsWith("fencekeeper: --endpoints: ");
    assertThat(env.err()).startsWith("fencekeeper: FENCEKEEPER_ENDPOINTS: ");
    assertThat(took).isLessThan(Duration.ofSeconds(10));
  }

  // Guarantee: a bare host:port that is a node's Raft port (the node answers there that it is not
  // its client port) fails the call at once, naming the client port, instead of being retried
  // until the timeout.
  @Test
  void aRaftPortAnswersThatItIsNoClientPort() {
    PeerAddress n1 = cluster.config().peers().get(0);
    long started = System.nanoTime();
    CliRun run = CliRun.run(cluster.dataDir(), "lease", "show", "r", "--endpoints", n1.address());
    Duration took = Duration.ofNanos(System.nanoTime() - started);

    assertThat(run.exitCode()).as(run.toString()).isEqualTo(ExitCode.UNAVAILABLE.code());
    assertThat(run.line()).contains("Raft port", "client port 127.0.0.1:" + (n1.port() + 200));
    assertThat(took).isLessThan(Duration.ofSeconds(10));
  }

  // Guarantee: `lease run` hands its child the client endpoints it reached the cluster by, in
  // FENCEKEEPER_ENDPOINTS, and no FENCEKEEPER_PEERS.
  @Test
  void leaseRunExportsEndpoints() throws IOException {
    Path seen = cluster.dataDir().resolve("child-env");
    CliRun run =
        CliRun.run(
            Map.of("FENCEKEEPER_PEERS", "n9@10.9.9.9:7301"),
            cluster.dataDir(),
            "lease",
            "run",
            "child-env",
            "--ttl",
            "10s",
            "--endpoints",
            endpoints(),
            "--",
            "sh",
            "-c",
            "echo \"$FENCEKEEPER_ENDPOINTS|${FENCEKEEPER_PEERS:-none}\" > " + seen);
    assertThat(run.exitCode()).as(run.toString()).isZero();
    assertThat(Files.readString(seen).strip()).isEqualTo(endpoints() + "|none");
  }
}
