package dev.fencekeeper.tools;

import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.fencekeeper.client.FencingAdmin;
import dev.fencekeeper.client.FencingAdmin.Membership;
import dev.fencekeeper.client.FencingException;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.proto.ResultCode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code snapshot create}: write a snapshot now rather than at the next automatic trigger. */
@Command(
    name = "snapshot",
    mixinStandardHelpOptions = true,
    header = "Take Raft snapshots on demand.",
    subcommands = {SnapshotCommand.Create.class})
final class SnapshotCommand implements Runnable {
  @CommandLine.Spec private CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "choose: create");
  }

  @Command(
      name = "create",
      mixinStandardHelpOptions = true,
      header = "Snapshot a node's state now.",
      description = {
        "Writes a snapshot of the applied state on the leader (default), on --node <id>, or on"
            + " --all",
        "members, and prints the log index each covers. The log before a snapshot can then be"
            + " purged, and",
        "a restart replays less. Exit 0, 10 if <id> is not a member, 11 if any node failed."
      })
  static final class Create extends AdminVerb implements CallDeadline.Changes {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @ArgGroup(exclusive = true)
    private Target target;

    static final class Target {
      @Option(names = "--node", paramLabel = "<id>", description = "The member to snapshot.")
      String node;

      @Option(names = "--all", description = "Every member.")
      boolean all;
    }

    Create(CliContext context) {
      super(context);
    }

    @Override
    Report run(FencingAdmin admin, ClusterConfig cluster) {
      Membership m = admin.membership();
      List<String> nodes;
      if (target != null && target.all) {
        nodes = m.members().stream().map(PeerAddress::id).toList();
      } else if (target != null && target.node != null) {
        nodes = List.of(target.node);
      } else if (!m.leaderId().isEmpty()) {
        nodes = List.of(m.leaderId());
      } else {
        return Report.failure(ResultCode.UNAVAILABLE, "no leader known; name a node with --node");
      }
      List<String> lines = new ArrayList<>();
      var json = Json.object();
      ArrayNode snapshots = json.putArray("snapshots");
      ResultCode failed = null;
      for (String id : nodes) {
        try {
          long index = admin.snapshot(id, TIMEOUT);
          lines.add("SNAPSHOT " + id + " index=" + index);
          snapshots.addObject().put("node", id).put("index", index);
        } catch (FencingException e) {
          if (nodes.size() == 1) {
            return Report.failure(e);
          }
          failed = failed == null ? ResultCode.valueOf(e.code().name()) : failed;
          lines.add(e.code() + ": " + id + ": " + e.result().message());
          snapshots
              .addObject()
              .put("node", id)
              .put("status", e.code().name())
              .put("error", e.result().message());
        }
      }
      if (failed != null) {
        json.put("message", "some nodes failed to take a snapshot");
        var o = Json.object().put("status", failed.name());
        o.setAll(json);
        return new Report(ExitCode.of(failed), o, lines);
      }
      return Report.ok(json, lines);
    }
  }
}
