package dev.fencekeeper.tools;

import static dev.fencekeeper.tools.CliRun.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.config.LocalPorts;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The client verbs against three real nodes in this JVM: what they print and how they exit. */
class ClientVerbsTest {
  @RegisterExtension static final InProcessCluster cluster = InProcessCluster.perClass();

  /** Runs a verb against the test cluster. */
  private static CliRun cli(String... args) {
    return cluster.cli(args);
  }

  private static long acquire(String resource, String ttl, String owner) {
    CliRun run = cli("lease", "acquire", resource, "--ttl", ttl, "--owner", owner, "-q");
    assertThat(run.exitCode()).as(run.toString()).isZero();
    return Long.parseLong(run.line());
  }

  /**
   * Waits until the cluster has expired the lease on {@code resource} (its leader commits the
   * expiry).
   */
  private static void awaitNoLiveLease(String resource) {
    Awaitility.await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> !json(cli("lease", "show", resource, "--json")).get("live").asBoolean());
  }

  private static String resource(TestInfo test) {
    return test.getTestMethod().orElseThrow().getName();
  }

  // Guarantee: a grant prints one readable line with the token, time left and owner, and exits 0.
  @Test
  void acquirePrintsTheGrant(TestInfo test) {
    CliRun run = cli("lease", "acquire", resource(test), "--ttl", "5s", "--owner", "worker-a");

    assertThat(run.exitCode()).as(run.toString()).isZero();
    assertThat(run.line())
        .matches(
            "GRANTED "
                + resource(test)
                + " token=\\d+ expires in [45]\\.\\ds \\(owner worker-a\\)");
  }

  // Guarantee: -q prints the token alone, and on rejection prints nothing on stdout (the reason
  // goes to stderr, alone: the cluster is named by its client endpoints, so no deprecation
  // warning).
  @Test
  void quietAcquirePrintsOnlyTheToken(TestInfo test) {
    CliRun granted =
        CliRun.run(
            cluster.dataDir(),
            "lease",
            "acquire",
            resource(test),
            "--ttl",
            "30s",
            "-q",
            "--endpoints",
            cluster.endpoints());
    CliRun held =
        CliRun.run(
            cluster.dataDir(),
            "lease",
            "acquire",
            resource(test),
            "--ttl",
            "30s",
            "-q",
            "--endpoints",
            cluster.endpoints());

    assertThat(granted.out()).matches("\\d+\\n");
    assertThat(held.exitCode()).isEqualTo(ExitCode.HELD.code());
    assertThat(held.out()).isEmpty();
    assertThat(held.err())
        .startsWith("HELD: " + resource(test) + " is held by token " + granted.line());
  }

  // Guarantee: HELD names the holder's token and owner, in JSON, and exits 3.
  @Test
  void heldAcquireNamesTheHolder(TestInfo test) throws IOException {
    long token = acquire(resource(test), "30s", "worker-a");

    CliRun run =
        cli("lease", "acquire", resource(test), "--ttl", "5s", "--owner", "worker-b", "--json");

    assertThat(run.exitCode()).isEqualTo(3);
    JsonNode json = json(run);
    assertThat(json.get("status").asText()).isEqualTo("HELD");
    assertThat(json.get("token").asLong()).isEqualTo(token);
    assertThat(json.get("holderOwner").asText()).isEqualTo("worker-a");
    assertThat(json.get("expiresAtMs").asLong()).isPositive();
  }

  // Guarantee: the seed scenario through the CLI: A's late write is STALE_TOKEN (exit 6) and B's
  // value stays.
  @Test
  void staleWriteIsRejectedAndTheNewerValueStays(TestInfo test) throws IOException {
    String resource = resource(test);
    long a = acquire(resource, "300ms", "worker-a");
    awaitNoLiveLease(resource);
    long b = acquire(resource, "30s", "worker-b");
    CliRun accepted = cli("write", resource, "report", "by worker-b", "--token", Long.toString(b));

    CliRun stale = cli("write", resource, "report", "by worker-a", "--token", Long.toString(a));
    CliRun staleJson =
        cli("write", resource, "report", "by worker-a", "--token", Long.toString(a), "--json");
    CliRun read = cli("read", resource, "report", "--json");

    assertThat(accepted.line())
        .isEqualTo("ACCEPTED " + resource + "/report token=" + b + " version=1");
    assertThat(stale.exitCode()).isEqualTo(6);
    assertThat(stale.line())
        .isEqualTo(
            "STALE_TOKEN: token "
                + a
                + " is stale; "
                + resource
                + " has token "
                + b
                + " held by worker-b");
    JsonNode json = json(staleJson);
    assertThat(staleJson.exitCode()).isEqualTo(6);
    assertThat(json.get("status").asText()).isEqualTo("STALE_TOKEN");
    assertThat(json.get("sentToken").asLong()).isEqualTo(a);
    assertThat(json.get("currentToken").asLong()).isEqualTo(b);
    assertThat(json.get("holderOwner").asText()).isEqualTo("worker-b");
    JsonNode value = json(read);
    assertThat(value.get("status").asText()).isEqualTo("FOUND");
    assertThat(value.get("value").asText()).isEqualTo("by worker-b");
    assertThat(value.get("acceptedToken").asLong()).isEqualTo(b);
    assertThat(value.get("version").asLong()).isEqualTo(1);
  }

  // Guarantee: a write after the lease ended, with no newer token, is LEASE_EXPIRED (exit 7), not
  // accepted.
  @Test
  void writeAfterExpiryIsLeaseExpired(TestInfo test) {
    long token = acquire(resource(test), "300ms", "worker-a");
    awaitNoLiveLease(resource(test));

    CliRun run = cli("write", resource(test), "k", "v", "--token", Long.toString(token));

    assertThat(run.exitCode()).as(run.toString()).isEqualTo(7);
    assertThat(run.line()).startsWith("LEASE_EXPIRED: ");
  }

  // Guarantee: a token never issued for the resource is UNKNOWN_TOKEN (exit 8).
  @Test
  void neverIssuedTokenIsUnknown(TestInfo test) {
    long token = acquire(resource(test), "30s", "worker-a");

    CliRun run =
        cli("write", resource(test), "k", "v", "--token", Long.toString(token + 1_000_000));

    assertThat(run.exitCode()).as(run.toString()).isEqualTo(8);
    assertThat(run.line()).startsWith("UNKNOWN_TOKEN: ");
  }

  // Guarantee: renew and release succeed for the holder (exit 0) and say LEASE_LOST (4) /
  // NOT_HOLDER (5) otherwise.
  @Test
  void renewAndReleaseAnswerForHolderAndOthers(TestInfo test) throws IOException {
    String resource = resource(test);
    long old = acquire(resource, "300ms", "worker-a");
    awaitNoLiveLease(resource);
    long current = acquire(resource, "30s", "worker-b");

    CliRun renewed = cli("lease", "renew", resource, Long.toString(current), "--ttl", "20s");
    CliRun lost = cli("lease", "renew", resource, Long.toString(old));
    CliRun notHolder = cli("lease", "release", resource, Long.toString(old));
    CliRun released = cli("lease", "release", resource, Long.toString(current));
    CliRun again = cli("lease", "release", resource, Long.toString(current), "--json");

    assertThat(renewed.exitCode()).as(renewed.toString()).isZero();
    assertThat(renewed.line())
        .matches(
            "RENEWED "
                + resource
                + " token="
                + current
                + " expires in (20\\.0|19\\.\\d)s \\(owner worker-b\\)");
    assertThat(lost.exitCode()).isEqualTo(4);
    assertThat(lost.line()).startsWith("LEASE_LOST: ");
    assertThat(notHolder.exitCode()).isEqualTo(5);
    assertThat(notHolder.line()).startsWith("NOT_HOLDER: ");
    assertThat(released.exitCode()).isZero();
    assertThat(released.line()).isEqualTo("RELEASED " + resource + " token=" + current);
    assertThat(again.exitCode()).isZero();
    assertThat(json(again).get("alreadyEnded").asBoolean()).isTrue();
  }

  // Guarantee: validate tells CURRENT (0), STALE (13) and EXPIRED (14) apart.
  @Test
  void validateDistinguishesCurrentStaleAndExpired(TestInfo test) {
    String resource = resource(test);
    long old = acquire(resource, "300ms", "worker-a");
    awaitNoLiveLease(resource);
    long current = acquire(resource, "30s", "worker-b");

    CliRun currentRun = cli("lease", "validate", resource, Long.toString(current));
    CliRun staleRun = cli("lease", "validate", resource, Long.toString(old));
    cli("lease", "release", resource, Long.toString(current));
    CliRun expiredRun = cli("lease", "validate", resource, Long.toString(current));

    assertThat(currentRun.exitCode()).as(currentRun.toString()).isZero();
    assertThat(currentRun.line()).startsWith("CURRENT " + resource + " token=" + current);
    assertThat(staleRun.exitCode()).isEqualTo(13);
    assertThat(staleRun.line()).startsWith("STALE: token " + old + " is stale");
    assertThat(expiredRun.exitCode()).isEqualTo(14);
  }

  // Guarantee: TTLs outside the cluster's bounds are refused by the cluster as INVALID_ARGUMENT
  // (exit 9).
  @Test
  void ttlOutsideBoundsIsInvalidArgument(TestInfo test) {
    CliRun run = cli("lease", "acquire", resource(test), "--ttl", "2h");

    assertThat(run.exitCode()).as(run.toString()).isEqualTo(9);
    assertThat(run.line()).startsWith("INVALID_ARGUMENT: ");
  }

  // Guarantee: lease show reports holder and liveness; a never-leased resource or missing key is
  // NOT_FOUND (10).
  @Test
  void showAndReadReportWhatExists(TestInfo test) throws IOException {
    String resource = resource(test);
    CliRun neverLeased = cli("lease", "show", resource);
    long token = acquire(resource, "30s", "worker-a");

    JsonNode shown = json(cli("lease", "show", resource, "--json"));
    CliRun missingKey = cli("read", resource, "nothing-here");

    assertThat(neverLeased.exitCode()).isEqualTo(10);
    assertThat(neverLeased.line()).startsWith("NOT_FOUND: ");
    assertThat(shown.get("status").asText()).isEqualTo("FOUND");
    assertThat(shown.get("live").asBoolean()).isTrue();
    assertThat(shown.get("token").asLong()).isEqualTo(token);
    assertThat(shown.get("holderOwner").asText()).isEqualTo("worker-a");
    assertThat(shown.get("ttlMs").asLong()).isEqualTo(30_000);
    assertThat(missingKey.exitCode()).isEqualTo(10);
  }

  // Guarantee: --delete removes a key under the lease, and a retried write with one --request-id
  // applies once.
  @Test
  void deleteAndRetriedWrites(TestInfo test) throws IOException {
    String resource = resource(test);
    String token = Long.toString(acquire(resource, "30s", "worker-a"));

    JsonNode first =
        json(
            cli("write", resource, "k", "v1", "--token", token, "--request-id", "job-7", "--json"));
    JsonNode retry =
        json(
            cli("write", resource, "k", "v1", "--token", token, "--request-id", "job-7", "--json"));
    JsonNode afterRetry = json(cli("read", resource, "k", "--json"));
    CliRun deleted = cli("write", resource, "k", "--delete", "--token", token);
    CliRun afterDelete = cli("read", resource, "k");

    assertThat(first.get("status").asText()).isEqualTo("ACCEPTED");
    assertThat(retry.get("status").asText()).isEqualTo("ACCEPTED");
    assertThat(retry.get("version").asLong()).isEqualTo(first.get("version").asLong());
    assertThat(afterRetry.get("version").asLong()).isEqualTo(1);
    assertThat(deleted.exitCode()).as(deleted.toString()).isZero();
    assertThat(afterDelete.exitCode()).isEqualTo(10);
  }

  // Guarantee: a stale read from a replica returns the value, and binary values reach JSON intact.
  @Test
  void staleReadAndBinaryValues(TestInfo test) throws IOException {
    String resource = resource(test);
    byte[] binary = {(byte) 0xfe, (byte) 0xff, 0x00};
    try (FencingClient client = FencingClient.connect(cluster.config())) {
      long token = client.acquireToken(resource, Duration.ofSeconds(30), "worker-a").token();
      assertThat(client.write(resource, token, "bin", binary).isAccepted()).isTrue();
    }

    JsonNode linearizable = json(cli("read", resource, "bin", "--json"));
    Awaitility.await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> cli("read", resource, "bin", "--stale").exitCode() == 0);

    assertThat(Base64.getDecoder().decode(linearizable.get("valueBase64").asText()))
        .isEqualTo(binary);
  }

  // Guarantee: status lists every node with pid, role, term and applied index, names the leader,
  // and exits 0.
  @Test
  void statusShowsEveryNodeAndTheLeader() throws IOException {
    CliRun table = cli("status");
    CliRun run = cli("status", "--json");

    assertThat(run.exitCode()).as(run.toString()).isZero();
    JsonNode json = json(run);
    assertThat(json.get("status").asText()).isEqualTo("OK");
    assertThat(json.get("nodes")).hasSize(3);
    int leaders = 0;
    for (JsonNode node : json.get("nodes")) {
      assertThat(node.get("id").asText()).matches("n[123]");
      assertThat(node.get("address").asText()).startsWith("127.0.0.1:");
      assertThat(node.get("pid").asLong()).isEqualTo(ProcessHandle.current().pid());
      assertThat(node.get("term").asLong()).isPositive();
      assertThat(node.has("lastAppliedIndex")).isTrue();
      leaders += node.get("role").asText().equals("LEADER") ? 1 : 0;
    }
    assertThat(leaders).isEqualTo(1);
    assertThat(json.get("leader").asText()).matches("n[123]");
    // The cluster's id line is there once the nodes asked have applied the entry it is minted from.
    List<String> lines = table.out().lines().filter(l -> !l.startsWith("cluster ")).toList();
    assertThat(lines).hasSize(5);
    assertThat(lines.get(0)).startsWith("ID").contains("ADDRESS", "PID", "ROLE", "TERM", "APPLIED");
    assertThat(lines.get(4)).isEqualTo("leader " + json.get("leader").asText());
  }

  // Guarantee: metrics on a node without metrics.port says so (UNAVAILABLE, exit 11) instead of
  // failing obscurely.
  @Test
  void metricsWithoutAnEndpointIsUnavailable() throws IOException {
    CliRun run = cli("metrics", "--node", "n1", "--json");

    assertThat(run.exitCode()).as(run.toString()).isEqualTo(ExitCode.UNAVAILABLE.code());
    JsonNode json = json(run);
    assertThat(json.get("status").asText()).isEqualTo("UNAVAILABLE");
    assertThat(json.get("message").asText())
        .isEqualTo("n1 serves no metrics: set metrics.port in its properties and restart it");
  }

  // Guarantee: with no node reachable, status says so per node and exits 11 within a few seconds.
  @Test
  void statusWithoutNodesIsUnavailable() throws IOException {
    int first = LocalPorts.freeNodePort();
    int second = LocalPorts.freeNodePort();
    while (second == first) { // the kernel may hand the port it just freed out again
      second = LocalPorts.freeNodePort();
    }
    String nowhere = "127.0.0.1:" + first + ",127.0.0.1:" + second;
    CliRun run = CliRun.run(cluster.dataDir(), "status", "--json", "--peers", nowhere);

    assertThat(run.exitCode()).as(run.toString()).isEqualTo(11);
    JsonNode json = json(run);
    assertThat(json.get("status").asText()).isEqualTo("UNAVAILABLE");
    assertThat(json.has("leader")).isFalse();
    for (JsonNode node : json.get("nodes")) {
      assertThat(node.get("role").asText()).isEqualTo("unreachable");
    }
  }

  // Guarantee: an argument starting with @ is taken literally, never replaced by the file it names,
  // whether it is a value, a resource, a key or an owner.
  @Test
  void atArgumentsAreLiteralNotFiles(TestInfo test) throws IOException {
    Path secret = cluster.dataDir().resolve("secret.txt");
    Files.writeString(secret, "the file's contents\n");
    String at = "@" + secret;
    String resource = at + "-" + resource(test);
    JsonNode grant =
        json(cli("lease", "acquire", resource, "--ttl", "30s", "--owner", at, "--json"));
    String token = grant.get("token").asText();

    CliRun write = cli("write", resource, at, at, "--token", token);
    JsonNode read = json(cli("read", resource, at, "--json"));

    assertThat(grant.get("status").asText()).isEqualTo("GRANTED");
    assertThat(grant.get("resource").asText()).isEqualTo(resource);
    assertThat(grant.get("holderOwner").asText()).isEqualTo(at);
    assertThat(write.exitCode()).as(write.toString()).isZero();
    assertThat(read.get("key").asText()).isEqualTo(at);
    assertThat(read.get("value").asText()).isEqualTo(at);
  }

  // Guarantee: --value-file FILE and --value-file - (standard input) write the bytes as they are,
  // up to the cluster's 1 MiB limit, which a command-line argument cannot reach; one byte more is
  // INVALID_ARGUMENT (9).
  @Test
  void valueFromAFileOrStandardInputUpToTheLimit(TestInfo test) throws IOException {
    String resource = resource(test);
    String token = Long.toString(acquire(resource, "30s", "worker-a"));
    int limit = cluster.config().limits().maxValueBytes();
    byte[] fromFile = new byte[limit];
    byte[] fromStdin = new byte[limit - 1];
    new Random(18).nextBytes(fromFile);
    new Random(20).nextBytes(fromStdin);
    Path file = cluster.dataDir().resolve(resource + ".bin");
    Files.write(file, fromFile);
    Path tooLarge = cluster.dataDir().resolve(resource + "-too-large.bin");
    Files.write(tooLarge, new byte[limit + 1]);

    CliRun viaFile =
        cli("write", resource, "file", "--value-file", file.toString(), "--token", token);
    CliRun viaStdin =
        CliRun.run(
            Map.of(),
            cluster.dataDir(),
            new ByteArrayInputStream(fromStdin),
            "write",
            resource,
            "stdin",
            "--value-file",
            "-",
            "--token",
            token,
            "--peers",
            cluster.peers());
    CliRun over =
        cli("write", resource, "over", "--value-file", tooLarge.toString(), "--token", token);
    CliRun missing = cli("write", resource, "k", "--value-file", "no-such-file", "--token", token);

    assertThat(viaFile.exitCode()).as(viaFile.toString()).isZero();
    assertThat(viaStdin.exitCode()).as(viaStdin.toString()).isZero();
    assertThat(valueOf(resource, "file")).isEqualTo(fromFile);
    assertThat(valueOf(resource, "stdin")).isEqualTo(fromStdin);
    assertThat(over.exitCode()).as(over.toString()).isEqualTo(ExitCode.INVALID_ARGUMENT.code());
    assertThat(cli("read", resource, "over").exitCode()).isEqualTo(ExitCode.NOT_FOUND.code());
    assertThat(missing.exitCode()).isEqualTo(ExitCode.USAGE.code());
    assertThat(missing.err())
        .contains("--value-file")
        .contains("no-such-file")
        .contains("no such file");
  }

  private static byte[] valueOf(String resource, String key) throws IOException {
    JsonNode read = json(cli("read", resource, key, "--json"));
    assertThat(read.get("status").asText()).isEqualTo("FOUND");
    return Base64.getDecoder().decode(read.get("valueBase64").asText());
  }

  // Guarantee: --timeout bounds a verb that would otherwise block (here an acquire waiting a minute
  // in line):
  // it ends with UNAVAILABLE (exit 11) saying so, long before the wait would have.
  @Test
  void timeoutBoundsAVerbThatWouldBlock(TestInfo test) throws IOException {
    String resource = resource(test);
    acquire(resource, "2m", "worker-a");
    long started = System.nanoTime();

    CliRun run =
        cli(
            "lease",
            "acquire",
            resource,
            "--ttl",
            "5s",
            "--wait",
            "60s",
            "--timeout",
            "1s",
            "--json");

    Duration took = Duration.ofNanos(System.nanoTime() - started);
    assertThat(run.exitCode()).as(run.toString()).isEqualTo(ExitCode.UNAVAILABLE.code());
    JsonNode json = json(run);
    assertThat(json.get("status").asText()).isEqualTo("UNAVAILABLE");
    assertThat(json.get("message").asText()).contains("no answer within 1s (--timeout)");
    assertThat(took).isLessThan(Duration.ofSeconds(40));
  }
}
