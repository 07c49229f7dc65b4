package dev.fencekeeper.tools.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.tools.Json;
import dev.fencekeeper.tools.bench.Runner.Measurement;
import dev.fencekeeper.tools.bench.Workload.Worker;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * {@code --node-w2}: W2 through the Java client's Lease API and through the Node client's ({@code
 * clients/node/bench/w2.mjs}, run as a child {@code node} process), on the same cluster, one after
 * the other at each worker count, in two rounds whose order is reversed (Java, Node; then Node,
 * Java) so that a drift of the machine's load over the run weighs on both alike.
 */
final class NodeW2 {
  /** The worker counts compared: one writer, and a pipeline of them. */
  static final List<Integer> WORKERS = List.of(1, 16);

  static final String JAVA = "java";
  static final String NODE = "node";

  /** How long past its windows the Node process may take (start, connect, acquire, release). */
  private static final Duration NODE_SLACK = Duration.ofSeconds(60);

  private NodeW2() {}

  /** One window of one client. */
  record Row(
      String client,
      int round,
      int workers,
      long writes,
      long errors,
      double seconds,
      double p50Ms,
      double p99Ms) {
    double writesPerSecond() {
      return seconds <= 0 ? Double.NaN : writes / seconds;
    }
  }

  /** Both clients at one worker count, over every round. */
  record Ratio(int workers, double javaWritesPerSecond, double nodeWritesPerSecond) {
    double nodePerJava() {
      return javaWritesPerSecond <= 0 ? Double.NaN : nodeWritesPerSecond / javaWritesPerSecond;
    }
  }

  record Figures(String nodeVersion, List<Row> rows) {
    /** Writes over seconds of all of a client's rounds at each worker count, Node over Java. */
    List<Ratio> ratios() {
      List<Ratio> out = new ArrayList<>();
      for (int w : rows.stream().map(Row::workers).distinct().toList()) {
        out.add(new Ratio(w, pooled(JAVA, w), pooled(NODE, w)));
      }
      return out;
    }

    private double pooled(String client, int workers) {
      List<Row> of =
          rows.stream().filter(r -> r.client().equals(client) && r.workers() == workers).toList();
      double seconds = of.stream().mapToDouble(Row::seconds).sum();
      return seconds <= 0 ? Double.NaN : of.stream().mapToLong(Row::writes).sum() / seconds;
    }
  }

  /**
   * The Node client's directory: {@code explicit} if given, else {@code clients/node} of the
   * repository the bench's jar was built in ({@code tools/bench/target/}), else under the current
   * directory.
   */
  static Path clientDir(Path explicit) {
    if (explicit != null) {
      return explicit.toAbsolutePath().normalize();
    }
    try {
      Path jar = Path.of(NodeW2.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      Path root = jar.getParent() == null ? null : jar.getParent().getParent();
      root = root == null ? null : root.getParent() == null ? null : root.getParent().getParent();
      if (root != null && Files.isDirectory(root.resolve("clients/node"))) {
        return root.resolve("clients/node");
      }
    } catch (Exception e) {
      // no code source to go by: the current directory decides
    }
    return Path.of("clients/node").toAbsolutePath().normalize();
  }

  /**
   * Refuses, before any cluster starts, when {@code node} cannot run or the Node client is not
   * built: the comparison would otherwise fail half-way through.
   *
   * @return the output of {@code node --version}
   */
  static String check(Path clientDir) {
    return check(clientDir, "node");
  }

  /** As {@link #check(Path)}, with {@code node} the command that runs Node.js. */
  static String check(Path clientDir, String node) {
    Path script = clientDir.resolve("bench/w2.mjs");
    if (!Files.isRegularFile(script)) {
      throw new ConfigException(
          "--node-w2: no Node bench script at "
              + script
              + "; name the Node client's directory with --node-client DIR");
    }
    if (!Files.isRegularFile(clientDir.resolve("dist/index.js"))) {
      throw new ConfigException(
          "--node-w2: the Node client is not built ("
              + clientDir.resolve("dist/index.js")
              + " is missing); run `npm ci && npm run build` in "
              + clientDir);
    }
    try {
      Process p =
          new ProcessBuilder(node, "--version")
              .redirectErrorStream(true)
              .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
              .start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new ConfigException("--node-w2: `" + node + " --version` failed: " + out);
      }
      return out;
    } catch (IOException e) {
      throw new ConfigException(
          "--node-w2 needs Node.js 20 or later: `"
              + node
              + "` could not be run; is it on the PATH? ("
              + e.getMessage()
              + ")");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ConfigException("--node-w2: interrupted while running `node --version`");
    }
  }

  /** The nodes' client addresses as the Node client's {@code --peers} takes them. */
  static String nodePeers(ClusterConfig config) {
    return config.clientAddresses().stream()
        .map(PeerAddress::address)
        .collect(Collectors.joining(","));
  }

  static Figures measure(
      FencingClient client,
      ClusterConfig config,
      Path clientDir,
      String nodeVersion,
      Runner.Probe probe,
      Duration warmup,
      Duration duration,
      String runId,
      PrintStream progress)
      throws InterruptedException, IOException {
    List<Row> rows = new ArrayList<>();
    String peers = nodePeers(config);
    for (int round = 1; round <= 2; round++) {
      for (int workers : WORKERS) {
        List<String> order = round == 1 ? List.of(JAVA, NODE) : List.of(NODE, JAVA);
        for (String which : order) {
          Row row =
              which.equals(JAVA)
                  ? java(client, probe, round, workers, warmup, duration, runId)
                  : node(clientDir, peers, round, workers, warmup, duration, progress);
          rows.add(row);
          progress.printf(
              Locale.ROOT,
              "bench: node-w2 round %d %s x%d: %.0f writes/s, p50 %.2f ms, p99 %.2f ms, %d"
                  + " errors%n",
              round,
              which,
              workers,
              row.writesPerSecond(),
              row.p50Ms(),
              row.p99Ms(),
              row.errors());
          progress.flush();
        }
      }
    }
    return new Figures(nodeVersion, rows);
  }

  private static Row java(
      FencingClient client,
      Runner.Probe probe,
      int round,
      int workers,
      Duration warmup,
      Duration duration,
      String runId)
      throws InterruptedException {
    String id = runId + "-java-w2-r" + round;
    Measurement m =
        Runner.run(
            BenchReport.FENCEKEEPER,
            Workload.W2,
            workers,
            1,
            () -> {
              List<Worker> list = new ArrayList<>();
              for (int i = 0; i < workers; i++) {
                list.add(
                    Workload.W2.worker(client, id, i, workers, 1, Duration.ZERO, ClientApi.LEASE));
              }
              return list;
            },
            warmup,
            duration,
            probe);
    return new Row(
        JAVA,
        round,
        workers,
        m.ops(),
        m.failed(),
        m.seconds(),
        m.percentileMs(50),
        m.percentileMs(99));
  }

  private static Row node(
      Path clientDir,
      String peers,
      int round,
      int workers,
      Duration warmup,
      Duration duration,
      PrintStream progress)
      throws IOException, InterruptedException {
    Path json = Files.createTempFile("fencekeeper-bench-node-w2-", ".json");
    Path output = Files.createTempFile("fencekeeper-bench-node-w2-", ".log");
    try {
      List<String> command =
          List.of(
              "node",
              "bench/w2.mjs",
              "--peers",
              peers,
              "--workers",
              Integer.toString(workers),
              "--duration",
              duration.toMillis() + "ms",
              "--warmup",
              warmup.toMillis() + "ms",
              "--ttl",
              Workload.LEASE_TTL.toMillis() + "ms",
              "--json",
              json.toString());
      Process p =
          new ProcessBuilder(command)
              .directory(clientDir.toFile())
              .redirectErrorStream(true)
              .redirectOutput(output.toFile())
              .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
              .start();
      Duration limit = warmup.plus(duration).plus(NODE_SLACK);
      if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        throw new IllegalStateException(
            "node bench/w2.mjs did not end within "
                + limit.toSeconds()
                + " s; its output: "
                + Files.readString(output));
      }
      if (p.exitValue() != 0) {
        throw new IllegalStateException(
            "node bench/w2.mjs exited "
                + p.exitValue()
                + "; its output: "
                + Files.readString(output).strip());
      }
      return parseRow(Files.readString(json), round, workers);
    } finally {
      Files.deleteIfExists(json);
      Files.deleteIfExists(output);
    }
  }

  /** The row of {@code workers} in the JSON {@code bench/w2.mjs --json} writes. */
  static Row parseRow(String json, int round, int workers) throws IOException {
    JsonNode root = new ObjectMapper().readTree(json);
    for (JsonNode r : root.path("rows")) {
      if (r.path("workers").asInt() == workers) {
        return new Row(
            NODE,
            round,
            workers,
            r.path("writes").asLong(),
            r.path("errors").asLong(),
            r.path("seconds").asDouble(),
            r.path("p50Ms").asDouble(Double.NaN),
            r.path("p99Ms").asDouble(Double.NaN));
      }
    }
    throw new IllegalStateException(
        "bench/w2.mjs wrote no row for " + workers + " workers: " + json);
  }

  static ObjectNode toJson(Figures f) {
    ObjectNode o = Json.object();
    o.put("node_version", f.nodeVersion());
    ArrayNode rows = o.putArray("rows");
    for (Row r : f.rows()) {
      ObjectNode row = rows.addObject();
      row.put("client", r.client());
      row.put("round", r.round());
      row.put("workers", r.workers());
      row.put("writes", r.writes());
      row.put("errors", r.errors());
      row.put("seconds", BenchReport.round(r.seconds(), 3));
      row.put("writes_per_sec", BenchReport.round(r.writesPerSecond(), 1));
      row.put("p50_ms", BenchReport.round(r.p50Ms(), 3));
      row.put("p99_ms", BenchReport.round(r.p99Ms(), 3));
    }
    ArrayNode ratios = o.putArray("ratios");
    for (Ratio r : f.ratios()) {
      ObjectNode ratio = ratios.addObject();
      ratio.put("workers", r.workers());
      ratio.put("java_writes_per_sec", BenchReport.round(r.javaWritesPerSecond(), 1));
      ratio.put("node_writes_per_sec", BenchReport.round(r.nodeWritesPerSecond(), 1));
      ratio.put("node_per_java", BenchReport.round(r.nodePerJava(), 3));
    }
    return o;
  }

  /** The figures of the Markdown section, as its template (node-w2.md.mustache) shows them. */
  static Map<String, Object> markdown(Figures f) {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (Row r : f.rows()) {
      rows.add(
          ReportTemplate.model(
              "round", r.round(),
              "client", r.client().equals(JAVA) ? "Java" : "Node",
              "workers", r.workers(),
              "writesPerSecond", BenchReport.fmt(r.writesPerSecond(), 0),
              "p50", BenchReport.fmt(r.p50Ms(), 2),
              "p99", BenchReport.fmt(r.p99Ms(), 2),
              "errors", r.errors()));
    }
    List<Map<String, Object>> ratios = new ArrayList<>();
    for (Ratio r : f.ratios()) {
      ratios.add(
          ReportTemplate.model(
              "workers", r.workers(),
              "java", BenchReport.fmt(r.javaWritesPerSecond(), 0),
              "node", BenchReport.fmt(r.nodeWritesPerSecond(), 0),
              "nodePerJava", BenchReport.fmt(r.nodePerJava(), 2)));
    }
    return ReportTemplate.model(
        "nodeVersion",
        f.nodeVersion(),
        "ttlSeconds",
        Workload.LEASE_TTL.toSeconds(),
        "rows",
        rows,
        "ratios",
        ratios);
  }
}
