package com.example.reports;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.config.ClusterConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The client works as an ordinary dependency: with only what its published pom brings, next to the
 * application's own older protobuf-java, against a real three-node cluster.
 */
@Timeout(300)
class EmbeddedClientTest {
  private static LocalCluster cluster;

  @BeforeAll
  static void startCluster() throws Exception {
    cluster = LocalCluster.start(
        Path.of(System.getProperty("fencekeeper.jar")), Path.of(System.getProperty("cluster.dir")));
  }

  @AfterAll
  static void stopCluster() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  /** The README's snippet, pasted into an application, writes its report. */
  @Test
  void readmeSnippetWritesTheReport() {
    byte[] report = "totals by region".getBytes(StandardCharsets.UTF_8);

    assertThat(DailySalesReport.write(cluster.nodeConfig(), report)).isTrue();

    try (FencingClient client = FencingClient.connect(ClusterConfig.load(cluster.nodeConfig()))) {
      assertThat(client.read("daily-sales-report", "2026-11-29").valueAsString()).isEqualTo("totals by region");
    }
  }

  /**
   * A waiting acquire is granted once the holder is evicted, with a newer token; the evicted holder's
   * listener hears of it, and its late write is refused while the new holder's value stays.
   */
  @Test
  void pausedWorkerIsFencedOff() throws Exception {
    try (FencingClient client = FencingClient.connect(ClusterConfig.load(cluster.nodeConfig()))) {
      PausedWorker.Outcome outcome = PausedWorker.run(client, "nightly-export");

      assertThat(outcome.writeA().isAccepted()).isTrue();
      assertThat(outcome.tokenB()).isGreaterThan(outcome.tokenA());
      assertThat(outcome.writeB().isAccepted()).isTrue();
      assertThat(outcome.lateWriteA().isStale()).as(outcome.lateWriteA().toString()).isTrue();
      assertThat(outcome.lossA()).isEqualTo(Lease.LossReason.LEASE_LOST);
      assertThat(outcome.valueAfter()).isEqualTo("from worker-b");
    }
  }

  /** DailySalesReport is the README's "In Java" snippet, line for line, so the README shows code that runs. */
  @Test
  void exampleHoldsTheReadmeSnippet() throws Exception {
    String readme = Files.readString(Path.of(System.getProperty("readme")));
    Matcher block = Pattern.compile("## In Java\\n.*?```java\\n(.*?)```", Pattern.DOTALL).matcher(readme);
    assertThat(block.find()).as("a java block in the README's \"In Java\" section").isTrue();
    String example = Files.readString(
        Path.of(System.getProperty("example.sources"), "com/example/reports/DailySalesReport.java"));

    for (String line : block.group(1).strip().split("\\n")) {
      assertThat(example).as("DailySalesReport.java holds the README line").contains(line.strip());
    }
  }

  /**
   * The application keeps its own protobuf: fencekeeper brings none, no server code either, and of
   * Ratis only its relocated gRPC/Netty/protobuf runtime: no Ratis client, no Ratis types, no
   * Dropwizard metrics-core.
   */
  @Test
  void classPathHoldsOnlyTheApplicationsProtobufAndNoServer() throws Exception {
    String protobufJar = Struct.class.getProtectionDomain().getCodeSource().getLocation().getPath();
    String pinned = System.getProperty("protobuf.version");
    assertThat(pinned).startsWith("3.");
    assertThat(protobufJar).endsWith("/protobuf-java-" + pinned + ".jar");
    Struct message = Struct.newBuilder().putFields("region", Value.newBuilder().setStringValue("emea").build())
        .build();
    assertThat(Struct.parseFrom(message.toByteArray())).isEqualTo(message);

    assertThatThrownBy(() -> Class.forName("org.apache.ratis.server.impl.RaftServerImpl"))
        .isInstanceOf(ClassNotFoundException.class);
    assertThatThrownBy(() -> Class.forName("dev.fencekeeper.statemachine.FencingStateMachine"))
        .isInstanceOf(ClassNotFoundException.class);
    for (String absent :
        new String[] {
          "org.apache.ratis.client.RaftClient",
          "org.apache.ratis.protocol.RaftPeer",
          "org.apache.ratis.grpc.GrpcTlsConfig",
          "org.apache.ratis.server.RaftServerConfigKeys",
          "com.codahale.metrics.MetricRegistry"
        }) {
      assertThatThrownBy(() -> Class.forName(absent)).as(absent).isInstanceOf(ClassNotFoundException.class);
    }
    Class.forName("org.apache.ratis.thirdparty.io.grpc.ManagedChannel");
  }
}
