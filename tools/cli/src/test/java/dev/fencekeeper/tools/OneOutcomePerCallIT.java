package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fencekeeper.config.LocalPorts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Command-line writes and acquires against three node processes while every node is restarted in
 * turn (SIGTERM, start, wait for {@code /health}) and leadership is moved around: every call prints
 * one outcome and exits with its code, and that outcome is what the cluster applied — a write
 * reported ACCEPTED with version v is the v-th write the key took, an acquire reported GRANTED
 * holds the resource with that token. A call whose answer was lost is sent again with the same
 * request id, so it does not come back UNAVAILABLE (or, for an acquire, HELD by its own first
 * attempt).
 */
@Timeout(600)
class OneOutcomePerCallIT {
  private static final Duration START = Duration.ofSeconds(90);
  private static final String CALL_TIMEOUT = "30s";
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  @TempDir Path dir;
  private final List<String> ids = List.of("n1", "n2", "n3");
  private final Map<String, Integer> raftPorts = new LinkedHashMap<>();
  private final Map<String, Integer> metricsPorts = new LinkedHashMap<>();
  private final Map<String, CliProcess> nodes = new LinkedHashMap<>();
  private String peers;

  private record Call(int n, String verb, CliRun run, JsonNode json) {}

  @AfterEach
  void stopNodes() {
    nodes.values().forEach(CliProcess::close);
  }

  // Guarantee: through a rolling restart and leader transfers, every CLI write and acquire exits 0
  // with the outcome the cluster applied: ACCEPTED writes carry versions 1, 2, 3, ... in order and
  // the key ends at the last one; each GRANTED acquire's token is the resource's live lease.
  @Test
  void everyCallReportsWhatTheClusterApplied() throws Exception {
    StringBuilder peerList = new StringBuilder();
    for (String id : ids) {
      raftPorts.put(id, LocalPorts.freeNodePort());
      metricsPorts.put(id, LocalPorts.freePort());
      peerList.append(peerList.isEmpty() ? "" : ",").append(id).append("@127.0.0.1:");
      peerList.append(raftPorts.get(id));
    }
    peers = peerList.toString();
    for (String id : ids) {
      start(id);
    }
    for (String id : ids) {
      awaitReady(id);
    }
    CliRun lease = cli("lease", "acquire", "report", "--ttl", "1h", "--json");
    assertThat(lease.exitCode()).as(lease.toString()).isZero();
    long token = CliRun.json(lease).get("token").asLong();

    AtomicBoolean stop = new AtomicBoolean();
    List<Call> calls = new ArrayList<>();
    AtomicInteger answered = new AtomicInteger();
    CompletableFuture<Void> writer =
        CompletableFuture.runAsync(
            () -> {
              for (int n = 1; !stop.get(); n++) {
                calls.add(
                    call(
                        n,
                        "write",
                        cli(
                            "write",
                            "report",
                            "day",
                            "v" + n,
                            "--token",
                            Long.toString(token),
                            "--json")));
                answered.incrementAndGet();
                calls.add(
                    call(
                        n,
                        "acquire",
                        cli("lease", "acquire", "job-" + n, "--ttl", "1h", "--json")));
                answered.incrementAndGet();
              }
            });
    try {
      // Each step waits until the cluster as it left it has answered a few calls, so that every
      // configuration serves some, before the next step changes it.
      awaitCalls(answered, writer);
      // Rolling restart, the leader last; then leadership moved to each node in turn.
      List<String> order = new ArrayList<>(ids);
      String leader = leader();
      order.remove(leader);
      order.add(leader);
      for (String id : order) {
        CliProcess node = nodes.get(id);
        node.terminate();
        assertThat(node.awaitExit(Duration.ofSeconds(60))).as(node.describe()).isZero();
        start(id);
        awaitReady(id);
        awaitCalls(answered, writer);
      }
      for (String id : List.of("n1", "n2", "n3", "n1")) {
        CliRun transfer = cli("leader", "transfer", "--to", id);
        assertThat(transfer.exitCode()).as(transfer.toString()).isIn(0, 11);
        awaitCalls(answered, writer);
      }
    } finally {
      stop.set(true);
      writer.get();
    }

    long writes = calls.stream().filter(c -> c.verb().equals("write")).count();
    assertThat(writes).isGreaterThan(5);
    // Each resource's live lease, from one listing rather than a `lease show` per acquire.
    Map<String, JsonNode> leases = new LinkedHashMap<>();
    CliRun listed = cli("leases", "list", "--prefix", "job-", "--json");
    assertThat(listed.exitCode()).as(listed.toString()).isZero();
    for (JsonNode listing : CliRun.json(listed).get("leases")) {
      leases.put(listing.get("resource").asText(), listing);
    }
    for (Call c : calls) {
      assertThat(c.run().exitCode()).as(c.verb() + " " + c.n() + ": " + c.run()).isZero();
      if (c.verb().equals("write")) {
        assertThat(c.json().get("status").asText()).isEqualTo("ACCEPTED");
        // The n-th write is the key's n-th version: none was lost, none applied twice.
        assertThat(c.json().get("version").asLong()).as(c.run().toString()).isEqualTo(c.n());
      } else {
        assertThat(c.json().get("status").asText()).isEqualTo("GRANTED");
        JsonNode live = leases.get("job-" + c.n());
        assertThat(live).as("job-" + c.n() + " in " + listed).isNotNull();
        assertThat(live.get("live").asBoolean()).as("job-" + c.n() + ": " + live).isTrue();
        assertThat(live.get("token").asLong())
            .as("job-" + c.n() + ": " + live)
            .isEqualTo(c.json().get("token").asLong());
      }
    }
    CliRun read = cli("read", "report", "day", "--json");
    JsonNode value = CliRun.json(read);
    assertThat(value.get("version").asLong()).isEqualTo(writes);
    assertThat(value.get("value").asText()).isEqualTo("v" + writes);
  }

  /**
   * Waits until the writer has had 4 more calls answered (two writes, two acquires); fails at once
   * should the writer have ended.
   */
  private static void awaitCalls(AtomicInteger answered, CompletableFuture<Void> writer) {
    int from = answered.get();
    // Four calls of at most their --timeout each.
    await()
        .atMost(Duration.ofSeconds(150))
        .pollInterval(Duration.ofMillis(50))
        .failFast("the writer ended", writer::isDone)
        .until(() -> answered.get() >= from + 4);
  }

  private static Call call(int n, String verb, CliRun run) {
    try {
      return new Call(n, verb, run, CliRun.json(run));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private CliRun cli(String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.addAll(List.of("--peers", peers, "--timeout", CALL_TIMEOUT));
    return CliRun.run(dir, all.toArray(String[]::new));
  }

  private String leader() throws IOException {
    CliRun status = cli("status", "--json");
    return CliRun.json(status).get("leader").asText();
  }

  private void start(String id) throws IOException {
    Path config = dir.resolve(id + ".properties");
    Files.writeString(
        config,
        "node.id="
            + id
            + "\npeers="
            + peers
            + "\nstorage.dir="
            + dir.resolve("data").resolve(id)
            + "\nmetrics.port="
            + metricsPorts.get(id)
            + "\n");
    nodes.put(id, CliProcess.start(dir, id, "server", "--config", config.toString()));
  }

  private void awaitReady(String id) {
    try {
      await()
          .atMost(START)
          .pollInterval(Duration.ofMillis(250))
          .ignoreExceptions()
          .until(() -> health(metricsPorts.get(id)) == 200);
    } catch (ConditionTimeoutException e) {
      throw new AssertionError(id + " not ready\n" + nodes.get(id).describe(), e);
    }
  }

  private static int health(int port) throws IOException, InterruptedException {
    return HTTP.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
                .timeout(Duration.ofSeconds(3))
                .build(),
            HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }
}
