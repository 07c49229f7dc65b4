package dev.fencekeeper.tools;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.proto.NodeInfo;
import dev.fencekeeper.tools.ClusterProbe.NodeStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code status}: what each member says about itself. */
@Command(
    name = "status",
    mixinStandardHelpOptions = true,
    header = "Show every node's role, term and progress.",
    description = {
      "Per node: id, address, pid, role (LEADER, FOLLOWER, ... or unreachable), term, last applied index.",
      "Exit 0 if a leader is known, 11 if not."
    })
final class StatusCommand implements Callable<Integer> {
  static final String UNREACHABLE = "unreachable";
  private static final Duration TIMEOUT_PER_NODE = Duration.ofSeconds(1);

  private final CliContext context;

  @Mixin private ClientOptions client;

  StatusCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() {
    ClusterConfig cluster = client.cluster();
    List<NodeStatus> nodes;
    try (FencingClient fencing = FencingClient.connect(cluster)) {
      nodes = ClusterProbe.probe(fencing, cluster, TIMEOUT_PER_NODE);
    }
    Optional<NodeStatus> leader = ClusterProbe.leader(nodes);
    ExitCode exit = leader.isPresent() ? ExitCode.SUCCESS : ExitCode.UNAVAILABLE;
    if (client.json()) {
      Json.print(context.out(), json(nodes, leader, exit));
    } else {
      printTable(nodes, leader);
    }
    return exit.code();
  }

  private static ObjectNode json(List<NodeStatus> nodes, Optional<NodeStatus> leader, ExitCode exit) {
    ObjectNode o = Json.object();
    o.put("status", exit == ExitCode.SUCCESS ? "OK" : "UNAVAILABLE");
    leader.ifPresent(l -> o.put("leader", l.peer().id()));
    ArrayNode array = o.putArray("nodes");
    for (NodeStatus n : nodes) {
      ObjectNode node = array.addObject();
      node.put("id", n.peer().id());
      node.put("address", n.peer().address());
      if (!n.reachable()) {
        node.put("role", UNREACHABLE);
        node.put("error", n.error());
        continue;
      }
      NodeInfo info = n.info();
      node.put("pid", info.getPid());
      node.put("role", info.getRole());
      node.put("term", info.getTerm());
      node.put("lastAppliedIndex", info.getLastAppliedIndex());
      node.put("commitIndex", info.getCommitIndex());
      if (!info.getLeaderId().isEmpty()) {
        node.put("leaderId", info.getLeaderId());
      }
    }
    return o;
  }

  private void printTable(List<NodeStatus> nodes, Optional<NodeStatus> leader) {
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"ID", "ADDRESS", "PID", "ROLE", "TERM", "APPLIED"});
    for (NodeStatus n : nodes) {
      NodeInfo info = n.info();
      rows.add(n.reachable()
          ? new String[] {n.peer().id(), n.peer().address(), Long.toString(info.getPid()), info.getRole(),
              Long.toString(info.getTerm()), Long.toString(info.getLastAppliedIndex())}
          : new String[] {n.peer().id(), n.peer().address(), "-", UNREACHABLE, "-", "-"});
    }
    int[] widths = new int[rows.get(0).length];
    for (String[] row : rows) {
      for (int i = 0; i < row.length; i++) {
        widths[i] = Math.max(widths[i], row[i].length());
      }
    }
    for (String[] row : rows) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < row.length; i++) {
        line.append(i == row.length - 1 ? row[i] : String.format("%-" + (widths[i] + 2) + "s", row[i]));
      }
      context.out().println(line);
    }
    context.out().println(leader.map(l -> "leader " + l.peer().id()).orElse("no leader known"));
    context.out().flush();
  }
}
