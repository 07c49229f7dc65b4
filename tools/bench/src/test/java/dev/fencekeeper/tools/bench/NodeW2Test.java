package dev.fencekeeper.tools.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fencekeeper.config.ClusterConfig;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The Node-against-Java comparison's reading of the Node script, its ratios and its output. */
class NodeW2Test {
  /** What {@code clients/node/bench/w2.mjs --json} writes. */
  private static final String SCRIPT_JSON =
      """
      {
        "node": "v20.20.2",
        "rows": [
          {"workload": "W2", "client": "node", "workers": 1, "writesPerSecond": 400,
           "p50Ms": 2.4, "p99Ms": 5.1, "writes": 4000, "errors": 0, "seconds": 10.0},
          {"workload": "W2", "client": "node", "workers": 16, "writesPerSecond": 3000,
           "p50Ms": 5, "p99Ms": 12.5, "writes": 30000, "errors": 2, "seconds": 10.0}
        ]
      }
      """;

  static NodeW2.Figures figures() {
    return new NodeW2.Figures(
        "v20.20.2",
        List.of(
            new NodeW2.Row(NodeW2.JAVA, 1, 1, 5000, 0, 10, 1.9, 4.0),
            new NodeW2.Row(NodeW2.NODE, 1, 1, 4000, 0, 10, 2.4, 5.1),
            new NodeW2.Row(NodeW2.JAVA, 1, 16, 40000, 0, 10, 3.5, 9.0),
            new NodeW2.Row(NodeW2.NODE, 1, 16, 30000, 2, 10, 5, 12.5),
            new NodeW2.Row(NodeW2.NODE, 2, 1, 2000, 0, 10, 2.4, 5.1),
            new NodeW2.Row(NodeW2.JAVA, 2, 1, 5000, 0, 10, 1.9, 4.0),
            new NodeW2.Row(NodeW2.NODE, 2, 16, 30000, 0, 10, 5, 12.5),
            new NodeW2.Row(NodeW2.JAVA, 2, 16, 20000, 0, 10, 3.5, 9.0)));
  }

  // Guarantee: the row of the asked worker count is read from the script's JSON, every figure
  // under its own name; a missing row is an error, not a zero.
  @Test
  void readsTheScriptsRow() throws Exception {
    NodeW2.Row row = NodeW2.parseRow(SCRIPT_JSON, 2, 16);
    assertThat(row).isEqualTo(new NodeW2.Row(NodeW2.NODE, 2, 16, 30000, 2, 10.0, 5.0, 12.5));
    assertThat(row.writesPerSecond()).isEqualTo(3000.0);
    assertThatThrownBy(() -> NodeW2.parseRow(SCRIPT_JSON, 1, 64))
        .hasMessageContaining("no row for 64 workers");
  }

  // Guarantee: the ratio at each worker count pools every round of each client (writes over
  // seconds), Node over Java, and compares the same worker count only.
  @Test
  void ratioPoolsTheRoundsOfEachClient() {
    List<NodeW2.Ratio> ratios = figures().ratios();
    assertThat(ratios).extracting(NodeW2.Ratio::workers).containsExactly(1, 16);
    assertThat(ratios.get(0).javaWritesPerSecond()).isEqualTo(500.0);
    assertThat(ratios.get(0).nodeWritesPerSecond()).isEqualTo(300.0);
    assertThat(ratios.get(0).nodePerJava()).isEqualTo(0.6);
    assertThat(ratios.get(1).nodePerJava()).isEqualTo(1.0);
  }

  // Guarantee: the JSON carries each window and the ratios under stable names; the table shows
  // both clients' rows and the Node/Java ratio.
  @Test
  void jsonAndTableCarryRowsAndRatios() {
    BenchReport r = new BenchReport("./fencekeeper bench", ClusterConfig.local(7301), "test");
    r.nodeW2 = figures();
    JsonNode json = r.toJson().path("node_w2");
    assertThat(json.path("node_version").asText()).isEqualTo("v20.20.2");
    assertThat(json.path("rows")).hasSize(8);
    JsonNode first = json.path("rows").get(0);
    assertThat(first.path("client").asText()).isEqualTo("java");
    assertThat(first.path("round").asInt()).isEqualTo(1);
    assertThat(first.path("workers").asInt()).isEqualTo(1);
    assertThat(first.path("writes_per_sec").asDouble()).isEqualTo(500.0);
    assertThat(first.path("p99_ms").asDouble()).isEqualTo(4.0);
    JsonNode ratio = json.path("ratios").get(0);
    assertThat(ratio.path("workers").asInt()).isEqualTo(1);
    assertThat(ratio.path("java_writes_per_sec").asDouble()).isEqualTo(500.0);
    assertThat(ratio.path("node_writes_per_sec").asDouble()).isEqualTo(300.0);
    assertThat(ratio.path("node_per_java").asDouble()).isEqualTo(0.6);

    String tables = String.join("\n", r.tables());
    assertThat(tables)
        .contains("### W2 through the Node client against the Java client (same run)")
        .contains("| 1 | Java | 1 | 500 | 1.90 | 4.00 | 0 |")
        .contains("| 2 | Node | 16 | 3,000 | 5.00 | 12.50 | 0 |")
        .contains("| workers | Java writes/s | Node writes/s | Node/Java |")
        .contains("| 1 | 500 | 300 | 0.60× |")
        .contains("| 16 | 3,000 | 3,000 | 1.00× |");
  }

  // Guarantee: the Node client is pointed at the nodes' client ports, not their Raft ports.
  @Test
  void nodeClientGetsTheClientPorts() {
    ClusterConfig config = ClusterConfig.local(7301);
    String expected =
        String.join(",", config.clientAddresses().stream().map(a -> a.address()).toList());
    assertThat(NodeW2.nodePeers(config)).isEqualTo(expected).contains(":7501");
    assertThat(NodeW2.nodePeers(config)).doesNotContain(":7301");
  }
}
