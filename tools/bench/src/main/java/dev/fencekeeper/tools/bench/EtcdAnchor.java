package dev.fencekeeper.tools.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fencekeeper.tools.bench.Workload.Step;
import dev.fencekeeper.tools.bench.Workload.Worker;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code --baseline etcd}: three etcd 3.4 members from the Debian package ({@code /usr/bin/etcd},
 * default heartbeat, election timeout and fsync), and the lock recipe of etcd's own {@code
 * concurrency} package: a worker's session is a lease; a lock is a key put under that lease only if
 * it does not exist ({@code txn(create_revision(lock) == 0)}), and the key's create revision is the
 * fencing token; a fenced write is {@code txn(create_revision(lock) == token) then put(data)}, so a
 * holder whose key was deleted or re-created is refused.
 *
 * <p>The client speaks JSON to etcd's gRPC gateway ({@code /v3/kv/txn}, {@code /v3/lease/grant})
 * over {@code java.net.http}: no gRPC or protobuf version of etcd's lands on the bench's class
 * path, next to Ratis' and fencekeeper's own. The gateway costs each request a JSON decode and a
 * loopback gRPC call inside the member it reaches, which a native gRPC client would not pay;
 * docs/benchmarks.md says so next to the figures. Like etcd's Go client it sticks to one member and
 * moves to the next when that one stops answering.
 */
final class EtcdAnchor extends Anchor {
  static final Path BINARY = Path.of("/usr/bin/etcd");
  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String VALUE = b64(Workload.VALUE);

  private final List<URI> endpoints = new ArrayList<>();
  private final AtomicInteger pinned = new AtomicInteger();
  private final List<HttpClient> clients = new ArrayList<>();
  private final AtomicInteger nextClient = new AtomicInteger();

  EtcdAnchor(Path dir) {
    super(dir);
  }

  @Override
  String system() {
    return BenchReport.ETCD;
  }

  @Override
  boolean covers(Workload workload) {
    return workload == Workload.W1 || workload == Workload.W2 || workload == Workload.W3;
  }

  @Override
  void startMembers() throws IOException {
    int[] ports = freePorts(6);
    List<String> cluster = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      cluster.add("etcd" + i + "=http://127.0.0.1:" + ports[3 + i - 1]);
      endpoints.add(URI.create("http://127.0.0.1:" + ports[i - 1]));
    }
    for (int i = 1; i <= 3; i++) {
      Path data = Files.createDirectories(dir.resolve("etcd" + i));
      String client = "http://127.0.0.1:" + ports[i - 1];
      String peer = "http://127.0.0.1:" + ports[3 + i - 1];
      launch(
          "etcd" + i,
          List.of(
              BINARY.toString(),
              "--name",
              "etcd" + i,
              "--data-dir",
              data.toString(),
              "--listen-client-urls",
              client,
              "--advertise-client-urls",
              client,
              "--listen-peer-urls",
              peer,
              "--initial-advertise-peer-urls",
              peer,
              "--initial-cluster",
              String.join(",", cluster),
              "--initial-cluster-state",
              "new",
              "--initial-cluster-token",
              dir.getFileName().toString(),
              "--logger",
              "zap",
              "--log-level",
              "warn"));
    }
  }

  @Override
  void connect(int count) {
    for (int i = 0; i < count; i++) {
      clients.add(
          HttpClient.newBuilder()
              .version(HttpClient.Version.HTTP_1_1)
              .connectTimeout(Duration.ofSeconds(2))
              .build());
    }
  }

  @Override
  void awaitWritable(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    HttpClient http = clients.get(0);
    String last = "";
    while (System.nanoTime() < deadline) {
      try {
        ObjectNode put =
            JSON.createObjectNode().put("key", b64("fencekeeper-bench/ready")).put("value", VALUE);
        post(http, "/v3/kv/put", put);
        return;
      } catch (IOException e) {
        last = e.getMessage();
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException(
        "the etcd cluster did not commit a write within "
            + timeout
            + ": "
            + last
            + deadMember().map(d -> "; " + d).orElse(""));
  }

  @Override
  Optional<String> leader() {
    for (String id : memberIds()) {
      Optional<JsonNode> status = status(id);
      if (status.isPresent()) {
        String me = status.get().path("header").path("member_id").asText();
        String leader = status.get().path("leader").asText();
        if (!leader.isEmpty() && !leader.equals("0") && leader.equals(me)) {
          return Optional.of(id);
        }
      }
    }
    return Optional.empty();
  }

  @Override
  boolean serving(String id) {
    return status(id).map(s -> !s.path("leader").asText("0").equals("0")).orElse(false);
  }

  private Optional<JsonNode> status(String id) {
    URI endpoint = endpoints.get(Integer.parseInt(id.substring(4)) - 1);
    try {
      return Optional.of(
          postTo(clients.get(0), endpoint, "/v3/maintenance/status", JSON.createObjectNode()));
    } catch (IOException e) {
      return Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    }
  }

  @Override
  void closeClients() {
    clients.clear(); // java.net.http clients of Java 17 close with their last reference
  }

  @Override
  Worker worker(Workload workload, String runId, int index, int concurrency, Duration leaseTtl) {
    HttpClient http = clients.get(nextClient.getAndIncrement() % clients.size());
    String key =
        "fencekeeper-bench/"
            + runId
            + "/"
            + workload.name().toLowerCase(Locale.ROOT)
            + "/c"
            + concurrency
            + "/"
            + index;
    Resource r = new Resource(http, key, leaseTtl);
    return switch (workload) {
      case W1 -> AnchorWorkers.lockChurn(r);
      case W2 -> AnchorWorkers.fencedWrites(r);
      case W3 -> AnchorWorkers.staleReplay(r);
      default -> throw new IllegalArgumentException("no etcd equivalent of " + workload);
    };
  }

  /** One resource of one worker: its session lease, lock key and data key. */
  private final class Resource implements AnchorWorkers.Lock<Long> {
    final HttpClient http;
    final String lockKey;
    final String dataKey;
    final Duration ttl;
    String lease;

    Resource(HttpClient http, String key, Duration ttl) {
      this.http = http;
      this.lockKey = b64(key + "/lock");
      this.dataKey = b64(key + "/data");
      this.ttl = ttl;
    }

    /**
     * The session: one lease for the worker's locks, long enough for the run (no keep-alive in the
     * window).
     */
    @Override
    public void open() {
      try {
        JsonNode r =
            post(
                http,
                "/v3/lease/grant",
                JSON.createObjectNode().put("TTL", Long.toString(ttl.toSeconds())));
        lease = r.path("ID").asText();
        if (lease.isEmpty()) {
          throw new IllegalStateException("lease grant answered no ID: " + r);
        }
      } catch (IOException e) {
        throw new IllegalStateException("lease grant failed: " + e.getMessage(), e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted", e);
      }
    }

    @Override
    public void close() {
      try {
        post(http, "/v3/lease/revoke", JSON.createObjectNode().put("ID", lease));
      } catch (IOException e) {
        // the lease expires anyway
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    /**
     * The token (the lock key's create revision), or empty when the key exists (held). etcd's
     * recipe here does not queue: {@code wait} must be zero.
     */
    @Override
    public Optional<Long> acquire(Duration wait) throws IOException, InterruptedException {
      if (!wait.isZero()) {
        throw new IllegalArgumentException("the etcd recipe does not wait in line");
      }
      ObjectNode txn = txn(lockKey, 0);
      txn.putArray("success")
          .addObject()
          .putObject("request_put")
          .put("key", lockKey)
          .put("value", VALUE)
          .put("lease", lease);
      JsonNode r = post(http, "/v3/kv/txn", txn);
      return r.path("succeeded").asBoolean(false)
          ? Optional.of(r.path("header").path("revision").asLong())
          : Optional.empty();
    }

    @Override
    public Long acquireOrThrow() {
      try {
        return acquire(Duration.ZERO)
            .orElseThrow(() -> new IllegalStateException("acquire HELD for " + lockKey));
      } catch (IOException e) {
        throw new IllegalStateException("acquire " + e.getMessage() + " for " + lockKey, e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted", e);
      }
    }

    /**
     * OK when applied, {@link #REFUSED} when the compare on the token failed, a failure otherwise.
     */
    @Override
    public Step write(Long token) {
      ObjectNode txn = txn(lockKey, token);
      txn.putArray("success")
          .addObject()
          .putObject("request_put")
          .put("key", dataKey)
          .put("value", VALUE);
      return fenced(txn);
    }

    @Override
    public Step release(Long token) {
      ObjectNode txn = txn(lockKey, token);
      txn.putArray("success").addObject().putObject("request_delete_range").put("key", lockKey);
      return fenced(txn);
    }

    @Override
    public Step refusal() {
      return REFUSED;
    }

    private Step fenced(ObjectNode txn) {
      try {
        return post(http, "/v3/kv/txn", txn).path("succeeded").asBoolean(false) ? Step.OK : REFUSED;
      } catch (IOException e) {
        return Step.failed(e.getMessage());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return Step.failed("interrupted");
      }
    }
  }

  /** A txn refused by its compare: the lock key no longer carries the token's create revision. */
  private static final Step REFUSED =
      Step.failed("refused: lock key's create revision is not the token");

  private static ObjectNode txn(String lockKey, long createRevision) {
    ObjectNode txn = JSON.createObjectNode();
    ArrayNode compare = txn.putArray("compare");
    compare
        .addObject()
        .put("key", lockKey)
        .put("target", "CREATE")
        .put("result", "EQUAL")
        .put("create_revision", Long.toString(createRevision));
    return txn;
  }

  /**
   * POSTs to the pinned member; when it does not answer, pins the next one and tries it (each
   * once).
   */
  private JsonNode post(HttpClient http, String path, ObjectNode body)
      throws IOException, InterruptedException {
    IOException last = null;
    for (int attempt = 0; attempt < endpoints.size(); attempt++) {
      int at = pinned.get();
      try {
        return postTo(http, endpoints.get(at % endpoints.size()), path, body);
      } catch (java.net.ConnectException | java.net.http.HttpConnectTimeoutException e) {
        last = e;
        pinned.compareAndSet(at, at + 1);
      }
    }
    throw last;
  }

  private static JsonNode postTo(HttpClient http, URI endpoint, String path, ObjectNode body)
      throws IOException, InterruptedException {
    HttpRequest request =
        HttpRequest.newBuilder(endpoint.resolve(path))
            .timeout(REQUEST_TIMEOUT)
            .header("Content-Type", "application/json")
            .POST(
                HttpRequest.BodyPublishers.ofString(
                    JSON.writeValueAsString(body), StandardCharsets.UTF_8))
            .build();
    HttpResponse<String> response =
        http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    JsonNode json = JSON.readTree(response.body());
    if (response.statusCode() != 200 || json.has("error")) {
      throw new IOException(
          "HTTP "
              + response.statusCode()
              + " "
              + json.path("error").asText(json.path("message").asText()));
    }
    return json;
  }

  private static String b64(String s) {
    return b64(s.getBytes(StandardCharsets.UTF_8));
  }

  private static String b64(byte[] bytes) {
    return Base64.getEncoder().encodeToString(bytes);
  }
}
