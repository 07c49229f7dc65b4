package dev.fencekeeper.tools;

import dev.fencekeeper.client.FencingAdmin;
import dev.fencekeeper.client.FencingException;
import dev.fencekeeper.config.ClusterConfig;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * A verb that operates on the Raft group itself (membership, leadership, snapshots) through {@link
 * FencingAdmin}: prints a {@link Report}; a failure the cluster reports is a report too, with its
 * code.
 */
abstract class AdminVerb implements Callable<Integer>, ClientOptions.AdminOperation {
  protected final CliContext context;

  @Mixin protected ClientOptions client;

  @Mixin private TimeoutOption deadline;

  @Spec protected CommandSpec spec;

  AdminVerb(CliContext context) {
    this.context = context;
  }

  abstract Report run(FencingAdmin admin, ClusterConfig cluster);

  @Override
  public Integer call() {
    ClusterConfig cluster = client.cluster();
    Report report;
    try (FencingAdmin admin = client.admin(cluster)) {
      report = run(admin, cluster);
    } catch (FencingException e) {
      report = Report.failure(e);
    }
    CallOutcome.answered(context);
    return report.print(context, client.json());
  }

  CommandLine.ParameterException usageError(String message) {
    return new CommandLine.ParameterException(spec.commandLine(), message);
  }
}
