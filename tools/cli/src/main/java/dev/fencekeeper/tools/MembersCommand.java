package dev.fencekeeper.tools;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fencekeeper.client.FencingAdmin;
import dev.fencekeeper.client.FencingAdmin.Membership;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.config.PeerAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code members list|add|remove}: the Raft group's voting members. */
@Command(
    name = "members",
    mixinStandardHelpOptions = true,
    header = "List, add or remove cluster members.",
    description = {
      "Changes go through Raft (joint consensus): the cluster keeps serving while they commit.",
      "To add a node: write its properties file with the NEW peers list (every member plus itself),"
          + " start it",
      "with `fencekeeper server --config FILE --join`, then run `fencekeeper members add"
          + " ID=HOST:PORT`."
    },
    subcommands = {
      MembersCommand.ListMembers.class,
      MembersCommand.Add.class,
      MembersCommand.Remove.class
    })
final class MembersCommand implements Runnable {
  @CommandLine.Spec private CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(), "choose one of: list, add, remove");
  }

  /** The membership as lines: a table of members with the leader marked, then the peers= line. */
  static List<String> describe(Membership m) {
    return describe(m, null);
  }

  /**
   * As {@link #describe(Membership)}, with each follower's match index and lag from the leader's
   * view, and a line per lagging follower; {@code lag} null: without those.
   */
  static List<String> describe(Membership m, FollowerLagColumns lag) {
    Table table =
        lag == null
            ? new Table("ID", "ADDRESS", "")
            : new Table("ID", "ADDRESS", FollowerLagColumns.MATCH, FollowerLagColumns.LAG, "");
    for (PeerAddress p : m.members()) {
      String leader = p.id().equals(m.leaderId()) ? "leader" : "";
      if (lag == null) {
        table.row(p.id(), p.address(), leader);
      } else {
        table.row(p.id(), p.address(), lag.match(p.id()), lag.lag(p.id()), leader);
      }
    }
    List<String> lines = new ArrayList<>(table.lines());
    if (lag != null) {
      lines.addAll(lag.laggingLines());
    }
    if (m.leaderId().isEmpty()) {
      lines.add("no leader known");
    }
    if (m.changing()) {
      lines.add("a configuration change is in progress");
    }
    lines.add("peers=" + m.peersProperty());
    return lines;
  }

  static ObjectNode json(Membership m) {
    return json(m, null);
  }

  static ObjectNode json(Membership m, FollowerLagColumns lag) {
    ObjectNode o = Json.object();
    if (!m.leaderId().isEmpty()) {
      o.put("leader", m.leaderId());
    }
    ArrayNode members = o.putArray("members");
    for (PeerAddress p : m.members()) {
      ObjectNode member = members.addObject().put("id", p.id()).put("address", p.address());
      if (lag != null) {
        lag.json(p.id(), member);
      }
    }
    if (lag != null) {
      lag.jsonSummary(o);
    }
    o.put("peers", m.peersProperty());
    o.put("changing", m.changing());
    return o;
  }

  @Command(
      name = "list",
      mixinStandardHelpOptions = true,
      header = "Show the voting members and the leader.",
      description = {
        "Prints each member's id and address, marks the leader, and ends with the `peers=` line a"
            + " node's",
        "properties file needs for this membership. Each follower's match index and lag (entries /"
            + " seconds",
        "behind without advancing) are the leader's view, as in status; a follower lagging past"
            + " the leader's",
        "health.max-follower-lag is named below the table. Exit 0, 11 if no node answered."
      })
  static final class ListMembers extends AdminVerb {
    ListMembers(CliContext context) {
      super(context);
    }

    @Override
    Report run(FencingAdmin admin, ClusterConfig cluster) {
      Membership m = admin.membership();
      FollowerLagColumns lag = FollowerLagColumns.askLeader(admin, cluster, m.leaderId());
      return Report.ok(json(m, lag), describe(m, lag));
    }
  }

  @Command(
      name = "add",
      mixinStandardHelpOptions = true,
      header = "Add a running, group-less node as a member.",
      description = {
        "Adds <id>=<host:port> (its Raft address), which must already run with `fencekeeper server"
            + " --config FILE",
        "--join` and serve clients at --client-address (default: its Raft port + 200)",
        "(its FILE lists the peers as they will be after the change). It catches up from the leader"
            + " before",
        "it counts towards the majority. ADDED is printed once the new member serves: it answers"
            + " on its client",
        "port and has applied every entry the cluster had committed when it was added. A member"
            + " that was added",
        "but does not serve (it exited, stopped answering for 5s or stopped catching up) is"
            + " reported NOT_SERVING",
        "with the reason, exit 11: remove it, or fix and restart it. Exit 0, 9 if already a member,"
            + " 11 if the",
        "change failed or the new member does not serve."
      })
  static final class Add extends AdminVerb implements CallDeadline.Changes {
    /** The status of a member that was added but does not serve. */
    static final String NOT_SERVING = "NOT_SERVING";

    @Parameters(index = "0", paramLabel = "<id>=<host:port>")
    private String member;

    @CommandLine.Option(
        names = "--client-address",
        paramLabel = "<host:port>",
        description =
            "Where the new node serves clients (its client.port), if not its Raft port + 200. The"
                + " cluster records it and reports it for the member from then on.")
    private String clientAddress;

    Add(CliContext context) {
      super(context);
    }

    @Override
    Report run(FencingAdmin admin, ClusterConfig cluster) {
      PeerAddress peer = parse(member);
      Membership m =
          clientAddress == null ? admin.addMember(peer) : admin.addMember(peer, clientAddress);
      Optional<String> notServing;
      try {
        notServing = CatchUpWait.awaitServing(admin, m, peer.id());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        notServing = Optional.of("the wait for it to catch up was interrupted");
      }
      List<String> lines = new ArrayList<>();
      if (notServing.isPresent()) {
        lines.add(
            NOT_SERVING
                + ": "
                + peer.id()
                + " at "
                + peer.address()
                + " was added to the configuration but does not serve: "
                + notServing.get()
                + ". See its log; then remove it (`fencekeeper members remove "
                + peer.id()
                + "`) or fix and restart it");
        lines.addAll(describe(m));
        ObjectNode o =
            Json.object()
                .put("status", NOT_SERVING)
                .put("added", peer.id())
                .put("address", peer.address())
                .put("serving", false)
                .put("message", notServing.get());
        return new Report(ExitCode.UNAVAILABLE, o.setAll(json(m)), lines);
      }
      lines.add("ADDED " + peer.id() + " at " + peer.address());
      lines.addAll(describe(m));
      return Report.ok(
          Json.object()
              .put("added", peer.id())
              .put("address", peer.address())
              .put("serving", true)
              .setAll(json(m)),
          lines);
    }

    private PeerAddress parse(String text) {
      int eq = text.indexOf('=');
      String idAtAddress = eq > 0 ? text.substring(0, eq) + "@" + text.substring(eq + 1) : text;
      try {
        return PeerAddress.parse(idAtAddress);
      } catch (ConfigException e) {
        throw usageError(
            "'" + text + "' is not <id>=<host:port> (e.g. n4=10.0.0.4:7301): " + e.getMessage());
      }
    }
  }

  @Command(
      name = "remove",
      mixinStandardHelpOptions = true,
      header = "Remove a member.",
      description = {
        "Removes member <id> from the configuration; the others must still form a majority."
            + " Removing the",
        "leader makes it step down once the change commits. Stop the removed node's process"
            + " afterwards.",
        "Exit 0, 10 if no such member, 11 if the change failed."
      })
  static final class Remove extends AdminVerb implements CallDeadline.Changes {
    @Parameters(index = "0", paramLabel = "<id>")
    private String id;

    Remove(CliContext context) {
      super(context);
    }

    @Override
    Report run(FencingAdmin admin, ClusterConfig cluster) {
      Membership m = admin.removeMember(id);
      List<String> lines = new ArrayList<>();
      lines.add("REMOVED " + id + " (stop its process; its data is no longer needed)");
      lines.addAll(describe(m));
      return Report.ok(Json.object().put("removed", id).setAll(json(m)), lines);
    }
  }
}
