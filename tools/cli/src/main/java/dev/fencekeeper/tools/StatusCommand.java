package dev.fencekeeper.tools;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fencekeeper.client.EndpointClusters;
import dev.fencekeeper.client.FencingAdmin;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.proto.NodeInfo;
import dev.fencekeeper.tools.ClusterProbe.NodeStatus;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code status}: what each member says about itself. */
@Command(
    name = "status",
    mixinStandardHelpOptions = true,
    header = "Show every node's role, term and progress.",
    description = {
      "Per node of --peers: id, address, pid, role (LEADER, FOLLOWER, ... or unreachable), term,"
          + " last",
      "applied index, commit index, newest snapshot's index, size of its Raft log on disk, the"
          + " leader it",
      "follows, and from the leader's view of each follower its match index (MATCH) and lag (LAG:"
          + " entries",
      "behind / seconds behind without advancing); a follower lagging past the leader's"
          + " health.max-follower-lag",
      "is named below the table. Each node is given --timeout (default: client.request.timeout,"
          + " 3s) to answer;",
      "one that does not is shown unreachable, with the reason, and the others still are.",
      "Then the id of the cluster the nodes belong to (`cluster <id>`), or, when they report"
          + " different ones,",
      "which node belongs to which: nodes given as one cluster must all belong to the same.",
      "Exit 0 if a leader is known, 11 if not, 19 if every node refused the TLS handshake, 23 if"
          + " the nodes report different cluster ids."
    })
final class StatusCommand implements Callable<Integer> {
  static final String UNREACHABLE = "unreachable";

  static final String EVERY_NODE_REFUSED =
      "every node refused this client's TLS handshake (see each node's line for why); nothing was"
          + " sent, so nothing was applied";

  private final CliContext context;

  @Mixin private ClientOptions client;

  @Mixin private TimeoutOption deadline;

  StatusCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() {
    ClusterConfig cluster = client.cluster();
    List<NodeStatus> nodes;
    // Every node is asked at once over its own client port, each given the whole budget, and
    // answers from its own memory (not through Raft): one that does not answer in it is shown
    // unreachable with the reason while the others are reported. Closing waits for the connection
    // to a node that accepted it and never answered; the report must not.
    if (cluster.peers().isEmpty()) {
      // Named by client endpoints: each is asked as given, not through the membership the nodes
      // report, so that an endpoint of another cluster (whose ids may be this one's) shows as such.
      FencingClient fencing = client.connect(cluster);
      try {
        nodes = ClusterProbe.probe(fencing, cluster, deadline.budget(cluster.requestTimeout()));
      } finally {
        closeInBackground(fencing);
      }
    } else {
      FencingAdmin admin = client.admin(cluster);
      try {
        nodes = ClusterProbe.probe(admin, cluster, deadline.budget(cluster.requestTimeout()));
      } finally {
        closeInBackground(admin);
      }
    }
    CallOutcome.answered(context);
    Optional<NodeStatus> leader = ClusterProbe.leader(nodes);
    EndpointClusters clusters = clusters(nodes);
    // No node answered and every one refused this client's TLS handshake: its certificates are
    // the cause, which waiting for a leader cannot cure.
    boolean allRefused = !nodes.isEmpty() && nodes.stream().allMatch(NodeStatus::refused);
    ExitCode exit =
        !clusters.oneCluster()
            ? ExitCode.NOT_THIS_CLUSTER
            : leader.isPresent()
                ? ExitCode.SUCCESS
                : allRefused ? ExitCode.PERMISSION_DENIED : ExitCode.UNAVAILABLE;
    if (client.json()) {
      Json.print(context.out(), json(nodes, leader, clusters, exit));
    } else {
      printTable(nodes, leader, clusters);
    }
    return exit.code();
  }

  private static void closeInBackground(AutoCloseable connection) {
    Thread closer =
        new Thread(
            () -> {
              try {
                connection.close();
              } catch (Exception ignored) {
                // the report is printed; nothing is left to tell
              }
            },
            "fencekeeper-status-close");
    closer.setDaemon(true);
    closer.start();
  }

  private static ObjectNode json(
      List<NodeStatus> nodes,
      Optional<NodeStatus> leader,
      EndpointClusters clusters,
      ExitCode exit) {
    ObjectNode o = Json.object();
    o.put(
        "status",
        switch (exit) {
          case SUCCESS -> "OK";
          case NOT_THIS_CLUSTER -> "CLUSTER_IDS_DIFFER";
          case PERMISSION_DENIED -> "PERMISSION_DENIED";
          default -> "UNAVAILABLE";
        });
    if (exit == ExitCode.PERMISSION_DENIED) {
      o.put("message", EVERY_NODE_REFUSED);
    }
    leader.ifPresent(l -> o.put("leader", l.peer().id()));
    clusters.clusterId().ifPresent(id -> o.put("clusterId", id));
    o.put("clusterIdsDiffer", !clusters.oneCluster());
    if (!clusters.oneCluster()) {
      o.put("message", clusters.describe());
    }
    FollowerLagColumns lag = lagColumns(leader);
    lag.jsonSummary(o);
    ArrayNode array = o.putArray("nodes");
    for (NodeStatus n : nodes) {
      ObjectNode node = array.addObject();
      node.put("id", n.peer().id());
      node.put("address", n.peer().address());
      lag.json(n.peer().id(), node);
      if (!n.reachable()) {
        node.put("role", UNREACHABLE);
        node.put("error", n.error());
        continue;
      }
      NodeInfo info = n.info();
      node.put("pid", info.getPid());
      node.put("role", info.getRole());
      if (!info.getClusterId().isEmpty()) {
        node.put("clusterId", info.getClusterId());
      }
      node.put("term", info.getTerm());
      node.put("lastAppliedIndex", info.getLastAppliedIndex());
      node.put("commitIndex", info.getCommitIndex());
      if (!info.getLeaderId().isEmpty()) {
        node.put("leaderId", info.getLeaderId());
      }
      node.put("snapshotIndex", info.getSnapshotIndex());
      node.put("logSizeBytes", info.getLogSizeBytes());
      if (info.getMetricsPort() > 0) {
        node.put("metricsPort", info.getMetricsPort());
      }
    }
    return o;
  }

  private void printTable(
      List<NodeStatus> nodes, Optional<NodeStatus> leader, EndpointClusters clusters) {
    Table table =
        new Table(
            "ID",
            "ADDRESS",
            "PID",
            "ROLE",
            "TERM",
            "APPLIED",
            "COMMIT",
            "SNAPSHOT",
            "LOG",
            "LEADER",
            FollowerLagColumns.MATCH,
            FollowerLagColumns.LAG);
    FollowerLagColumns lag = lagColumns(leader);
    for (NodeStatus n : nodes) {
      String id = n.peer().id();
      NodeInfo info = n.info();
      if (n.reachable()) {
        table.row(
            n.peer().id(),
            n.peer().address(),
            Long.toString(info.getPid()),
            info.getRole(),
            Long.toString(info.getTerm()),
            Long.toString(info.getLastAppliedIndex()),
            Long.toString(info.getCommitIndex()),
            info.getSnapshotIndex() < 0 ? "-" : Long.toString(info.getSnapshotIndex()),
            bytes(info.getLogSizeBytes()),
            info.getLeaderId().isEmpty() ? "-" : info.getLeaderId(),
            lag.match(id),
            lag.lag(id));
      } else {
        table.row(
            id,
            n.peer().address(),
            "-",
            UNREACHABLE,
            "-",
            "-",
            "-",
            "-",
            "-",
            "-",
            lag.match(id),
            lag.lag(id));
      }
    }
    table.lines().forEach(context.out()::println);
    lag.laggingLines().forEach(context.out()::println);
    for (NodeStatus n : nodes) {
      if (!n.reachable()) {
        context.out().println(n.peer().id() + " " + UNREACHABLE + ": " + n.error());
      }
    }
    if (!clusters.byCluster().isEmpty()) {
      // "cluster <id>", or which node belongs to which cluster
      context.out().println(clusters.describe());
    }
    if (leader.isEmpty() && !nodes.isEmpty() && nodes.stream().allMatch(NodeStatus::refused)) {
      context.out().println("PERMISSION_DENIED: " + EVERY_NODE_REFUSED);
    } else {
      context.out().println(leader.map(l -> "leader " + l.peer().id()).orElse("no leader known"));
    }
    context.out().flush();
  }

  /** The cluster id each node that answered reported, and why the others did not answer. */
  static EndpointClusters clusters(List<NodeStatus> nodes) {
    Map<String, String> ids = new TreeMap<>();
    Map<String, String> unanswered = new TreeMap<>();
    for (NodeStatus n : nodes) {
      if (n.reachable()) {
        ids.put(n.peer().id(), n.info().getClusterId());
      } else {
        unanswered.put(n.peer().id(), n.error());
      }
    }
    return new EndpointClusters(ids, unanswered);
  }

  /** The leader's view of its followers; every cell {@code -} when no leader answered. */
  private static FollowerLagColumns lagColumns(Optional<NodeStatus> leader) {
    return new FollowerLagColumns(leader.map(NodeStatus::info).orElse(null));
  }

  /** Bytes in binary units with one decimal: 512B, 4.0KiB, 12.5MiB, 1.2GiB. */
  static String bytes(long n) {
    if (n < 1024) {
      return n + "B";
    }
    String[] units = {"KiB", "MiB", "GiB", "TiB"};
    double value = n;
    int unit = -1;
    while (value >= 1024 && unit < units.length - 1) {
      value /= 1024;
      unit++;
    }
    return String.format(java.util.Locale.ROOT, "%.1f%s", value, units[unit]);
  }
}
