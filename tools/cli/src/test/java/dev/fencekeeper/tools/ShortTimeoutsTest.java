package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.KeyChange;
import dev.fencekeeper.client.ReadConsistency;
import dev.fencekeeper.client.ReadResult;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.config.Security;
import dev.fencekeeper.server.FencekeeperServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * CLI writes and {@code status} with short {@code --timeout}s against three nodes kept busy by
 * other writers, in plaintext and with mutual TLS: every call prints exactly one result (one line,
 * or one JSON object) and never anything after it, its exit code is that result's, and the result
 * is true of the cluster — an ACCEPTED write is there, a timed-out write is reported as of unknown
 * outcome, a timed-out status says nothing of changes.
 */
@Timeout(300)
class ShortTimeoutsTest {
  @RegisterExtension static final InProcessCluster cluster = InProcessCluster.perClass();

  @TempDir Path tlsDir;

  private static final ObjectMapper STRICT =
      new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
  private static final String[] TIMEOUTS = {"1ms", "20ms", "60ms", "150ms", "400ms", "2s"};

  /** One call and its streams, read again after the calls still out have had time to end. */
  private record Call(
      String what, boolean json, int exit, ByteArrayOutputStream buffer, String printedAtExit) {
    String out() {
      return buffer.toString(StandardCharsets.UTF_8);
    }

    /** The single result: its text line, or its JSON object's {@code status}. */
    String status() throws IOException {
      return json ? STRICT.readTree(out()).get("status").asText() : out().split("[: ]", 2)[0];
    }

    String message() throws IOException {
      return json ? STRICT.readTree(out()).path("message").asText() : out();
    }
  }

  /** How the CLI reaches the cluster under test, and where it runs. */
  private record Target(List<String> options, Path workingDir) {}

  private static Call cli(Target target, String what, boolean json, String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.addAll(target.options());
    if (json) {
      all.add("--json");
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    CliContext context =
        new CliContext(
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
            Map.of(),
            target.workingDir());
    int exit = FencekeeperCli.execute(context, all.toArray(String[]::new));
    return new Call(what, json, exit, out, out.toString(StandardCharsets.UTF_8));
  }

  // Guarantee: under load and with timeouts shorter and longer than a call takes, each write and
  // status prints one result, never a second one later, exits with that result's code, and says
  // what the cluster did: ACCEPTED writes are stored, a timed-out write's outcome is unknown, a
  // timed-out status claims nothing about changes. (The old CallDeadline let a timed-out verb
  // print its late answer too: UNAVAILABLE and then ACCEPTED, exit 11, the write applied.)
  @Test
  void everyCallPrintsOneTrueResult() throws Exception {
    everyCallPrintsOneTrueResult(
        cluster.config(), new Target(List.of("--peers", cluster.peers()), cluster.dataDir()));
  }

  // Guarantee: the same on a cluster with mutual TLS, where each CLI call also sets up TLS and
  // makes its handshakes within its deadline.
  @Test
  void everyCallPrintsOneTrueResultWithMutualTls() throws Exception {
    Path certs = tlsDir.resolve("certs");
    Certificates.writeLocalSet(certs, Duration.ofDays(1));
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
    ClusterConfig tlsCluster = ClusterConfig.fromProperties(p);
    List<FencekeeperServer> servers = new ArrayList<>();
    try {
      for (PeerAddress peer : tlsCluster.peers()) {
        servers.add(
            FencekeeperServer.start(
                withTls(tlsCluster, certs, Certificates.NODE)
                    .withNodeId(peer.id())
                    .withStorageDir(tlsDir.resolve(peer.id()))));
      }
      everyCallPrintsOneTrueResult(
          withTls(tlsCluster, certs, Certificates.CLIENT),
          new Target(
              List.of("--peers", p.getProperty("peers"), "--tls", "--certs", certs.toString()),
              tlsDir));
    } finally {
      for (FencekeeperServer server : servers) {
        server.close();
      }
    }
  }

  private static ClusterConfig withTls(ClusterConfig config, Path dir, String name) {
    return config.withSecurity(config.security().withTls(Security.TlsFiles.inDirectory(dir, name)));
  }

  private static void everyCallPrintsOneTrueResult(ClusterConfig clientConfig, Target target)
      throws Exception {
    AtomicBoolean loading = new AtomicBoolean(true);
    List<Thread> load = new ArrayList<>();
    List<Call> calls = new ArrayList<>();
    try (FencingClient client = FencingClient.connect(clientConfig)) {
      long token = client.acquireToken("timed", Duration.ofMinutes(10), "test").token();
      long loadToken = client.acquireToken("load", Duration.ofMinutes(10), "load").token();
      for (int t = 0; t < 4; t++) {
        int thread = t;
        Thread writer =
            new Thread(
                () -> {
                  byte[] value = new byte[2048];
                  for (int i = 0; loading.get(); i++) {
                    client.writeAsync(
                        "load",
                        loadToken,
                        List.of(KeyChange.put("l" + thread + "-" + (i % 64), value)),
                        null);
                    if (i % 16 == 15) {
                      client.write("load", loadToken, "l" + thread, value);
                    }
                  }
                });
        writer.setDaemon(true);
        writer.start();
        load.add(writer);
      }
      try {
        for (int i = 0; i < 30; i++) {
          String timeout = TIMEOUTS[i % TIMEOUTS.length];
          boolean json = i % 2 == 0;
          calls.add(
              cli(
                  target,
                  "write k" + i,
                  json,
                  "write",
                  "timed",
                  "k" + i,
                  "v" + i,
                  "--token",
                  Long.toString(token),
                  "--timeout",
                  timeout));
          if (i % 3 == 0) {
            calls.add(cli(target, "status", !json, "status", "--timeout", timeout));
          }
        }
      } finally {
        loading.set(false);
        for (Thread writer : load) {
          writer.join(10_000);
        }
      }
      // A verb whose deadline passed is still out in this JVM; give it time to answer, and to
      // print, were it able to.
      Thread.sleep(3_000);

      int timedOut = 0;
      int answered = 0;
      for (Call call : calls) {
        String out = call.out();
        assertThat(out).as(call.what()).isEqualTo(call.printedAtExit());
        if (call.json()) {
          JsonNode parsed = STRICT.readTree(out);
          assertThat(out.strip()).as(call.what()).doesNotContain("\n");
          assertThat(parsed.has("status")).as(out).isTrue();
        }
        String status = call.status();
        if (status.equals("UNAVAILABLE")) {
          timedOut++;
          assertThat(call.exit()).as(out).isEqualTo(ExitCode.UNAVAILABLE.code());
        } else {
          answered++;
        }
        if (call.what().equals("status")) {
          if (!call.json()) {
            // A table or the timeout's line, not both.
            assertThat(out.lines().filter(l -> l.startsWith("UNAVAILABLE")))
                .as(out)
                .hasSize(status.equals("UNAVAILABLE") ? 1 : 0);
          }
          if (call.exit() == 0) {
            assertThat(out).as(call.what()).contains("n1").doesNotContain("UNAVAILABLE");
          } else {
            assertThat(call.message()).as(out).doesNotContain("applied");
          }
          continue;
        }
        String key = call.what().substring("write ".length());
        ReadResult stored = client.read("timed", key, ReadConsistency.LINEARIZABLE);
        if (status.equals("ACCEPTED")) {
          assertThat(call.exit()).as(out).isZero();
          assertThat(stored.isFound()).as(call.what() + ": " + out).isTrue();
          assertThat(stored.valueAsString()).isEqualTo("v" + key.substring(1));
          assertThat(stored.version()).isEqualTo(1);
        } else {
          assertThat(status).as(out).isEqualTo("UNAVAILABLE");
          assertThat(call.message()).as(out).contains("may or may not have been applied");
        }
      }
      // Both outcomes happened, or the test proved nothing about the race between them.
      assertThat(timedOut).as("timed-out calls").isPositive();
      assertThat(answered).as("answered calls").isPositive();
    }
  }
}
