package dev.fencekeeper.tools;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fencekeeper.client.FencingAdmin;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.FencingException;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.proto.NodeInfo;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.tools.ClusterProbe.NodeStatus;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code metrics}: one node's figures, as its {@code /metrics} endpoint serves them. */
@Command(
    name = "metrics",
    mixinStandardHelpOptions = true,
    header = "Print a node's metrics (Prometheus text).",
    description = {
      "Fetches http://HOST:PORT/metrics of the leader (default), of --node <id>, or of --url, and"
          + " prints it.",
      "The node must serve metrics: metrics.port in its properties (`up` uses each node's port +"
          + " 100).",
      "With --json, prints {\"status\":\"OK\",\"node\":…,\"url\":…,\"samples\":{series: value}}.",
      "Exit 0, 10 if <id> is not a member, 11 if the node is unreachable or serves no metrics."
    })
final class MetricsCommand implements Callable<Integer> {
  private static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);
  private static final Pattern SAMPLE =
      Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\\{.*\\})?)\\s+(\\S+)(?:\\s+\\S+)?$");

  private final CliContext context;

  @Mixin private ClientOptions client;

  @Mixin private TimeoutOption deadline;

  @CommandLine.Spec private CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--node",
      paramLabel = "<id>",
      description = "The member to ask. Default: the leader.")
  private String node;

  @Option(
      names = "--url",
      paramLabel = "URL",
      description =
          "Fetch this URL instead of asking the cluster, e.g. http://10.0.0.1:9301/metrics.")
  private String url;

  @Option(
      names = "--grep",
      paramLabel = "TEXT",
      description = "Print only the series whose line contains TEXT.")
  private String grep;

  MetricsCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() {
    if (url != null && node != null) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "give either --node or --url, not both");
    }
    String shownNode = node;
    String target = url;
    if (target == null) {
      Located located;
      try {
        located = locate();
      } catch (FencingException e) {
        return Report.failure(e).print(context, client.json());
      }
      if (located.failure != null) {
        return located.failure.print(context, client.json());
      }
      shownNode = located.node;
      target = located.url;
    }
    String text;
    try {
      text = fetch(target);
    } catch (IOException e) {
      return Report.failure(
              ResultCode.UNAVAILABLE,
              "cannot fetch "
                  + target
                  + ": "
                  + (e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName()))
          .print(context, client.json());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Report.failure(ResultCode.UNAVAILABLE, "interrupted").print(context, client.json());
    }
    List<String> lines =
        text.lines()
            .filter(line -> grep == null || (!line.startsWith("#") && line.contains(grep)))
            .toList();
    if (client.json()) {
      ObjectNode json = Json.object();
      if (shownNode != null) {
        json.put("node", shownNode);
      }
      json.put("url", target);
      ObjectNode samples = json.putObject("samples");
      for (String line : lines) {
        var m = SAMPLE.matcher(line.strip());
        if (!line.startsWith("#") && m.matches()) {
          samples.put(m.group(1), parse(m.group(2)));
        }
      }
      return Report.ok(json, List.of()).print(context, true);
    }
    lines.forEach(context.out()::println);
    context.out().flush();
    return ExitCode.SUCCESS.code();
  }

  private static double parse(String value) {
    return switch (value) {
      case "+Inf" -> Double.POSITIVE_INFINITY;
      case "-Inf" -> Double.NEGATIVE_INFINITY;
      case "NaN" -> Double.NaN;
      default -> Double.parseDouble(value);
    };
  }

  /** Where to fetch from, or the report saying why there is nowhere. */
  private record Located(String node, String url, Report failure) {}

  private Located locate() {
    ClusterConfig cluster = client.cluster();
    // Ask the members Raft knows, not only --peers: a node added later is reachable too.
    FencingAdmin.Membership membership;
    try (FencingAdmin admin = client.admin(cluster)) {
      membership = admin.membership();
    }
    String id = node != null ? node : membership.leaderId();
    if (id.isEmpty()) {
      return new Located(
          null,
          null,
          Report.failure(ResultCode.UNAVAILABLE, "no leader known; name a node with --node"));
    }
    Optional<PeerAddress> peer = membership.member(id);
    if (peer.isEmpty()) {
      return new Located(
          null,
          null,
          Report.failure(
              ResultCode.NOT_FOUND,
              "no member " + id + " in the configuration (" + membership.peersProperty() + ")"));
    }
    // With the cluster's TLS settings: under TLS a node answers only a client with a certificate.
    ClusterConfig members =
        ClusterConfig.forPeers(
                membership.members().stream()
                    .map(PeerAddress::toString)
                    .collect(Collectors.joining(",")))
            .withSecurity(cluster.security());
    NodeInfo info;
    try (FencingClient fencing = FencingClient.connect(members)) {
      NodeStatus status =
          ClusterProbe.probe(fencing, members, deadline.budget(DEFAULT_TIMEOUT)).stream()
              .filter(n -> n.peer().id().equals(id))
              .findFirst()
              .orElseThrow();
      if (!status.reachable()) {
        return new Located(
            id,
            null,
            Report.failure(ResultCode.UNAVAILABLE, id + " did not answer: " + status.error()));
      }
      info = status.info();
    }
    if (info.getMetricsPort() <= 0) {
      return new Located(
          id,
          null,
          Report.failure(
              ResultCode.UNAVAILABLE,
              id + " serves no metrics: set metrics.port in its properties and restart it"));
    }
    String host =
        peer.get().host().indexOf(':') >= 0 ? "[" + peer.get().host() + "]" : peer.get().host();
    return new Located(id, "http://" + host + ":" + info.getMetricsPort() + "/metrics", null);
  }

  private String fetch(String target) throws IOException, InterruptedException {
    Duration timeout = deadline.budget(DEFAULT_TIMEOUT);
    URI uri;
    try {
      uri = URI.create(target);
    } catch (IllegalArgumentException e) {
      throw new IOException("not a URL: " + e.getMessage(), e);
    }
    HttpClient http = HttpClient.newBuilder().connectTimeout(timeout).build();
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(uri)
                .timeout(timeout)
                .header("Accept", "text/plain")
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 200) {
      throw new IOException("HTTP " + response.statusCode());
    }
    return response.body();
  }
}
