package dev.fencekeeper.tools.drill;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.CommonPool;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

/**
 * Worker A of the stale-writer drill, in its own JVM so that SIGSTOP freezes it whole. It does only
 * what the controller tells it on stdin, one command per line, and answers each with the cluster's
 * full response: {@code acquire RESOURCE TTL_MS}, {@code write RESOURCE KEY TOKEN VALUE}, {@code
 * exit}. The controller records these operations on its own clock, so A's history needs no merging.
 */
public final class StaleWriterProcess {
  static final String ANSWER_PREFIX = "@@ ";

  private StaleWriterProcess() {}

  public static void main(String[] args) throws Exception {
    CommonPool.atLeastTwoThreads();
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    ClusterConfig config = DrillCluster.clientConfig(ClusterConfig.forPeers(args[0]).peers());
    try (FencingClient client = FencingClient.connect(config, "A");
        BufferedReader in =
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      out.println(ANSWER_PREFIX + "ready");
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        String[] w = line.trim().split(" ");
        Result result;
        switch (w[0]) {
          case "acquire" ->
              result = client.acquireToken(w[1], Duration.ofMillis(Long.parseLong(w[2])), "A");
          case "write" ->
              result =
                  client.write(
                      w[1], Long.parseLong(w[3]), w[2], w[4].getBytes(StandardCharsets.UTF_8));
          case "exit" -> {
            return;
          }
          default -> throw new IllegalArgumentException("unknown command: " + line);
        }
        out.println(
            ANSWER_PREFIX
                + Base64.getEncoder().encodeToString(Wire.response(result).toByteArray()));
      }
    }
  }
}
