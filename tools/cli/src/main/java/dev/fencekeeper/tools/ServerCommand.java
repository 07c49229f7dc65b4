package dev.fencekeeper.tools;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.util.ContextInitializer;
import ch.qos.logback.core.joran.spi.JoranException;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.core.ReplicaDivergedException;
import dev.fencekeeper.server.FencekeeperServer;
import dev.fencekeeper.server.StorageFullException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code server}: one cluster node in this JVM, until it is told to stop. */
@Command(
    name = "server",
    mixinStandardHelpOptions = true,
    header = "Run one node of a cluster.",
    description = {
      "Runs until SIGTERM or Ctrl-C, then stops cleanly and exits 0. Its data lives in the config's"
          + " storage.dir; restarting on the same data resumes the same state. It logs to stderr"
          + " and to storage.dir/logs/fencekeeper.log (rolled daily and at 50MB;"
          + " -Dfencekeeper.log.dir=DIR moves it, -Dfencekeeper.log.dir=off turns it off).",
      "With --join the node starts without the cluster's group and waits to be added as a new"
          + " member (`fencekeeper members add ID=HOST:PORT`); its peers list names the cluster as"
          + " it will be.",
      "Exit 2 if the config file is missing or invalid (the message names the key and value). Exit"
          + " 12 if the node finds its state is not the one the cluster's log was written against"
          + " (a member added to a restored cluster without `restore --storage-dir`): it stops"
          + " rather than diverge."
    })
final class ServerCommand implements Callable<Integer> {
  /** The root log level in logback.xml; a node logs at INFO, the client verbs at WARN. */
  static final String LOG_LEVEL_PROPERTY = "fencekeeper.log.level";

  /**
   * Where the node's rolling log file goes; fencekeeper-logback-base.xml adds the file only when
   * set.
   */
  static final String LOG_DIR_PROPERTY = "fencekeeper.log.dir";

  static final String LOG_DIR_OFF = "off";

  private final CliContext context;

  @Option(
      names = "--config",
      paramLabel = "FILE",
      description =
          "The node's properties file: node.id, peers, storage.dir, limits. Each key can also be"
              + " set, or overridden, by an environment variable: FENCEKEEPER_ and the key in upper"
              + " case with . and - as _ (FENCEKEEPER_NODE_ID, FENCEKEEPER_PEERS,"
              + " FENCEKEEPER_STORAGE_DIR, FENCEKEEPER_BIND, ...); without --config they are the"
              + " whole config.")
  private Path configFile;

  @Option(
      names = "--join",
      description = "Start without the group, to be added to a running cluster with `members add`.")
  private boolean join;

  // `up` passes its own pid so that its nodes never outlive it, even when it is killed with -9.
  @Option(names = "--parent-pid", hidden = true)
  private Long parentPid;

  ServerCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() throws IOException, InterruptedException {
    // Before anything logs: logback reads this once, when it starts.
    if (System.getProperty(LOG_LEVEL_PROPERTY) == null) {
      System.setProperty(LOG_LEVEL_PROPERTY, "INFO");
    }
    ClusterConfig config =
        ClusterConfig.load(configFile == null ? null : context.resolve(configFile), context.env());
    String id =
        config.self().id(); // a config without node.id cannot run a node: say so before starting
    if (chooseLogDir(config)) {
      reloadLogging(); // loading the config touched Ratis classes, which may have started Logback
      // already
    }

    FencekeeperServer server;
    try {
      server = join ? FencekeeperServer.join(config) : FencekeeperServer.start(config);
    } catch (StorageFullException e) {
      context.err().println("fencekeeper: node " + id + " did not start: " + e.getMessage());
      return ExitCode.STORAGE_FULL.code();
    } catch (IOException e) {
      // E.g. storage.dir is not writable. (A taken port never gets here: Ratis exits the JVM with
      // 1.)
      context.err().println("fencekeeper: node " + id + " could not start: " + e.getMessage());
      return ExitCode.USAGE.code();
    }
    CountDownLatch mustStop = new CountDownLatch(1);
    Termination termination =
        Termination.onSignal(
            () -> {
              context.err().println("fencekeeper: stopping node " + id);
              closeQuietly(server);
            });
    if (parentPid != null) {
      Optional<ProcessHandle> parent = ProcessHandle.of(parentPid);
      parent.ifPresentOrElse(p -> p.onExit().thenRun(mustStop::countDown), mustStop::countDown);
    }
    server.stateMachine().diverged().thenRun(mustStop::countDown);
    server.storageExhausted().thenRun(mustStop::countDown);
    mustStop
        .await(); // until the parent (if any) is gone or the replica stopped; a signal exits on its
    // own
    termination.close();
    StorageFullException full = server.storageExhausted().getNow(null);
    if (full != null) {
      // The Raft server has stopped already, with room to spare; a supervisor starts the node again
      // once space has been freed (until then the start refuses, with this same code).
      context.err().println("fencekeeper: node " + id + " stopped: " + full.getMessage());
      closeQuietly(server);
      return ExitCode.STORAGE_FULL.code();
    }
    ReplicaDivergedException diverged = server.stateMachine().diverged().getNow(null);
    if (diverged != null) {
      // A process that kept running here would look like a member while serving nothing: exit,
      // loudly.
      context.err().println("fencekeeper: node " + id + " stopped: " + diverged.getMessage());
      // Ratis is already closing the group after the failed apply; do not let a slow close keep us
      // here.
      Thread closer = new Thread(() -> closeQuietly(server), "fencekeeper-close-diverged");
      closer.setDaemon(true);
      closer.start();
      closer.join(TimeUnit.SECONDS.toMillis(10));
      return ExitCode.INTERNAL.code();
    }
    context
        .err()
        .println("fencekeeper: parent process " + parentPid + " is gone; stopping node " + id);
    closeQuietly(server);
    return ExitCode.SUCCESS.code();
  }

  /**
   * The rolling log file goes to {@code storage.dir/logs} unless {@code -Dfencekeeper.log.dir} says
   * elsewhere, or {@code off}. Logback reads the property once, when the first logger is created.
   */
  static boolean chooseLogDir(ClusterConfig config) {
    String chosen = System.getProperty(LOG_DIR_PROPERTY);
    if (chosen == null || chosen.isBlank()) {
      System.setProperty(
          LOG_DIR_PROPERTY, config.storageDir().resolve("logs").toAbsolutePath().toString());
      return true;
    } else if (LOG_DIR_OFF.equalsIgnoreCase(chosen.trim())) {
      System.clearProperty(LOG_DIR_PROPERTY);
      return true;
    }
    return false;
  }

  /**
   * Reads the Logback configuration again (the same file or resource), now that the properties are
   * set.
   */
  private void reloadLogging() {
    if (LoggerFactory.getILoggerFactory() instanceof LoggerContext logback) {
      logback.reset();
      try {
        new ContextInitializer(logback).autoConfig();
      } catch (JoranException e) {
        context.err().println("fencekeeper: reloading the log configuration failed: " + e);
      }
    }
  }

  private void closeQuietly(FencekeeperServer server) {
    try {
      server.close();
    } catch (IOException | RuntimeException e) {
      context.err().println("fencekeeper: stopping the node failed: " + e);
    }
  }
}
