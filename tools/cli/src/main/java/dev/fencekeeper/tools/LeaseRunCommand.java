package dev.fencekeeper.tools;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.Durations;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code lease run}: a command that runs only while this process holds the lease, as {@code consul
 * lock} and {@code etcdctl lock} do. The child learns its token from the environment, to fence its
 * own writes with it.
 */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    header = "Hold a lease while a command runs.",
    description = {
      "Acquires <resource> (waiting with --wait), then runs COMMAND with FENCEKEEPER_RESOURCE,",
      "FENCEKEEPER_TOKEN and FENCEKEEPER_ENDPOINTS (the nodes' client ports) in its environment and"
          + " its input and output those of this",
      "process, renewing the lease about every TTL/3 meanwhile. When COMMAND exits the lease is"
          + " released",
      "and this exits with COMMAND's code. When the lease is lost (revoked, expired), COMMAND gets"
          + " SIGTERM,",
      "then SIGKILL (it and its children) after --grace, and this exits 21. SIGTERM or Ctrl-C to"
          + " this",
      "process stops COMMAND the same way, releases, and exits with COMMAND's code.",
      "Exit: COMMAND's code; 21 lease lost; 3 HELD, 16 LOCK_DELAYED, 11 UNAVAILABLE (not started);",
      "127 COMMAND could not be started.",
      "Example: fencekeeper lease run nightly-report --ttl 30s -- ./report.sh --date 2026-11-29"
    })
final class LeaseRunCommand implements Callable<Integer> {
  static final String ENV_RESOURCE = "FENCEKEEPER_RESOURCE";
  static final String ENV_TOKEN = "FENCEKEEPER_TOKEN";

  /** What a shell exits with for a command it cannot run; so does {@code timeout(1)}. */
  static final int CANNOT_START = 127;

  private final CliContext context;

  @Mixin private ClientOptions client;

  @Parameters(index = "0", paramLabel = "<resource>")
  private String resource;

  @Parameters(
      index = "1..*",
      paramLabel = "COMMAND",
      description = "The command and its arguments, after `--` so that its options stay its own.")
  private List<String> command;

  @Mixin private AcquireFlags flags;

  @Option(
      names = "--grace",
      paramLabel = "DURATION",
      converter = DurationConverter.class,
      defaultValue = "10s",
      description =
          "After SIGTERM, how long COMMAND may take to exit before SIGKILL. Default: 10s.")
  private Duration grace;

  @Option(
      names = "--timeout",
      paramLabel = "DURATION",
      converter = DurationConverter.class,
      description =
          "Give up acquiring after this long (--wait included): UNAVAILABLE, exit 11, COMMAND not"
              + " run.")
  private Duration timeout;

  @CommandLine.Spec private CommandLine.Model.CommandSpec spec;

  LeaseRunCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() throws InterruptedException {
    if (command == null || command.isEmpty()) {
      throw new CommandLine.ParameterException(spec.commandLine(), "missing COMMAND (after --)");
    }
    ClusterConfig cluster = client.cluster();
    try (FencingClient fencing = FencingClient.connect(cluster)) {
      HeldLeaseAcquisition acquired =
          HeldLeaseAcquisition.acquire(fencing, resource, flags, timeout);
      if (!acquired.granted()) {
        ResultView view = ResultView.ofLease(acquired.refusal(), resource);
        context.err().println(client.json() ? view.json().toString() : view.humanLine());
        context.err().flush();
        return view.exitCode().code();
      }
      return runHolding(fencing, acquired.lease(), cluster);
    }
  }

  private int runHolding(FencingClient fencing, Lease lease, ClusterConfig cluster)
      throws InterruptedException {
    CompletableFuture<Lease.LossReason> lost = new CompletableFuture<>();
    lease.onLost(lost::complete);
    Process child;
    try {
      ProcessBuilder builder =
          new ProcessBuilder(command).directory(context.workingDir().toFile()).inheritIO();
      builder.environment().put(ENV_RESOURCE, resource);
      builder.environment().put(ENV_TOKEN, Long.toString(lease.token()));
      // The child reaches the cluster as this process did, by its client ports; an inherited
      // FENCEKEEPER_PEERS (Raft addresses) would only mislead it.
      builder.environment().put(LocalDefaults.ENV_ENDPOINTS, LocalDefaults.endpointsValue(cluster));
      builder.environment().remove(LocalDefaults.ENV_PEERS);
      child = builder.start();
    } catch (IOException e) {
      end(fencing, lease);
      context.err().println("fencekeeper: cannot run " + command.get(0) + ": " + e.getMessage());
      context.err().flush();
      return CANNOT_START;
    }
    Thread stopOnSignal =
        new Thread(
            () -> {
              stop(child);
              end(fencing, lease);
              context.err().flush();
              // exit() would wait for this very hook; halt() ends now, with the code promised.
              Runtime.getRuntime()
                  .halt(child.isAlive() ? ExitCode.UNEXPECTED.code() : child.exitValue());
            },
            "lease-run-stop");
    Runtime.getRuntime().addShutdownHook(stopOnSignal);
    try {
      CompletableFuture.anyOf(child.onExit(), lost).join();
      if (child.isAlive()) {
        context
            .err()
            .println(
                "LOST "
                    + resource
                    + " token="
                    + lease.token()
                    + " ("
                    + lost.join()
                    + "): stopping "
                    + command.get(0)
                    + " (SIGTERM, SIGKILL after "
                    + Durations.format(grace)
                    + ")");
        context.err().flush();
        stop(child);
        end(fencing, lease);
        return ExitCode.RUN_LEASE_LOST.code();
      }
      end(fencing, lease);
      return child.exitValue();
    } finally {
      try {
        Runtime.getRuntime().removeShutdownHook(stopOnSignal);
      } catch (IllegalStateException shuttingDown) {
        // The hook is already running: it stops the child and ends the process itself.
      }
    }
  }

  /**
   * Stops renewing and releases by token, even when the client counts the lease as lost: a lease it
   * gave up on locally (no renewal answered in time) may still be live in the cluster, and
   * releasing it frees the resource now instead of after its TTL. A lease that really ended answers
   * NOT_HOLDER, harmlessly.
   */
  private void end(FencingClient fencing, Lease lease) {
    lease.abandon();
    fencing.release(resource, lease.token());
  }

  /**
   * SIGTERM, and SIGKILL to the child and everything it started if it has not exited within the
   * grace.
   */
  private void stop(Process child) {
    child.destroy();
    try {
      if (child.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
        return;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    child.descendants().forEach(ProcessHandle::destroyForcibly);
    child.destroyForcibly();
    try {
      child.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
