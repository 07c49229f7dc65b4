package dev.fencekeeper.tools;

import dev.fencekeeper.client.FencingAdmin;
import dev.fencekeeper.config.ClusterConfig;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code leader transfer|step-down}: move Raft leadership, e.g. off a node about to be maintained.
 */
@Command(
    name = "leader",
    mixinStandardHelpOptions = true,
    header = "Move the leader to another member, or make it step down.",
    description = {
      "Live leases survive the move: the new leader commits a takeover grace before it serves, so"
          + " holders",
      "that renew keep their leases; clients follow the new leader by themselves."
    },
    subcommands = {LeaderCommand.Transfer.class, LeaderCommand.StepDown.class})
final class LeaderCommand implements Runnable {
  @CommandLine.Spec private CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(), "choose one of: transfer, step-down");
  }

  static Report moved(String previous, String leader) {
    String line =
        leader.equals(previous)
            ? "LEADER " + leader + " (unchanged)"
            : "LEADER " + leader + (previous.isEmpty() ? "" : " (was " + previous + ")");
    var json = Json.object().put("leader", leader);
    if (!previous.isEmpty()) {
      json.put("previous", previous);
    }
    return Report.ok(json, List.of(line));
  }

  @Command(
      name = "transfer",
      mixinStandardHelpOptions = true,
      header = "Hand leadership to another member.",
      description = {
        "Makes --to <id> the leader, or without --to the most up-to-date other member. Returns once"
            + " it",
        "leads. Exit 0, 10 if <id> is not a member, 11 if the transfer failed (e.g. during a"
            + " membership",
        "change) or was refused at once because <id> lags behind the leader (status shows it):"
            + " leadership",
        "stays where it is."
      })
  static final class Transfer extends AdminVerb implements CallDeadline.Changes {
    @Option(
        names = "--to",
        paramLabel = "<id>",
        description = "The member to lead. Default: any other member.")
    private String to;

    Transfer(CliContext context) {
      super(context);
    }

    @Override
    Report run(FencingAdmin admin, ClusterConfig cluster) {
      String previous = admin.membership().leaderId();
      String leader =
          to == null ? admin.transferLeadershipToAnother() : admin.transferLeadership(to);
      return moved(previous, leader);
    }
  }

  @Command(
      name = "step-down",
      mixinStandardHelpOptions = true,
      header = "Make the leader step down.",
      description = {
        "The leader gives up leadership and the members elect again; any of them may win, the same"
            + " one",
        "included. Returns once a leader is known. Exit 0, 11 if no leader was known or none was"
            + " elected."
      })
  static final class StepDown extends AdminVerb implements CallDeadline.Changes {
    StepDown(CliContext context) {
      super(context);
    }

    @Override
    Report run(FencingAdmin admin, ClusterConfig cluster) {
      String previous = admin.membership().leaderId();
      return moved(previous, admin.stepDown());
    }
  }
}
