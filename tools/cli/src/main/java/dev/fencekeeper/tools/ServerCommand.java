package dev.fencekeeper.tools;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.util.ContextInitializer;
import ch.qos.logback.core.joran.spi.JoranException;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.config.PrivateFiles;
import dev.fencekeeper.core.ReplicaDivergedException;
import dev.fencekeeper.server.ClusterRefusedException;
import dev.fencekeeper.server.FencekeeperServer;
import dev.fencekeeper.server.StorageFullException;
import dev.fencekeeper.statemachine.FencingStateMachine;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
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
          + " storage.dir, private to the user it runs as (0700); restarting on the same data"
          + " resumes the same state. It logs to stderr, or, when log.dir is set, to"
          + " log.dir/fencekeeper.log alone (rolled daily and at 50MB).",
      "SIGHUP reloads the TLS certificate, key and trusted CAs (tls.cert, tls.key, tls.trust) for"
          + " every new connection; the node keeps running, and keeps its current certificate if"
          + " the files are wrong (its log says why).",
      "With --join the node starts without the cluster's group and waits to be added as a new"
          + " member (`fencekeeper members add ID=HOST:PORT`); its peers list names the cluster as"
          + " it will be.",
      "Before its Raft server starts, the node asks its peers which cluster they form. Exit 23,"
          + " without starting, if a peer has seen this node hold the cluster's log but its"
          + " storage.dir is empty (it lost its data: remove it and add it back with --join), or if"
          + " its storage belongs to another cluster than its peers'.",
      "Exit 2 if the config file is missing or invalid (the message names the key and value). Exit"
          + " 12 if the node finds its state is not the one the cluster's log was written against"
          + " (a member added to a restored cluster without `restore --storage-dir`): it stops"
          + " rather than diverge."
    })
final class ServerCommand implements Callable<Integer> {
  /** The root log level in logback.xml; a node logs at INFO, the client verbs at WARN. */
  static final String LOG_LEVEL_PROPERTY = "fencekeeper.log.level";

  /**
   * Where the node's rolling log file goes, from {@code log.dir}: fencekeeper-logback-base.xml logs
   * to that file instead of stderr when it is set.
   */
  static final String LOG_DIR_PROPERTY = "fencekeeper.log.dir";

  private static final Logger LOG = LoggerFactory.getLogger(ServerCommand.class);

  private final CliContext context;

  @Option(
      names = "--config",
      paramLabel = "FILE",
      description =
          "The node's properties file: node.id, peers, storage.dir, limits. Each key but peers"
              + " can also be set, or overridden, by an environment variable: FENCEKEEPER_ and the"
              + " key in upper case with . and - as _ (FENCEKEEPER_NODE_ID,"
              + " FENCEKEEPER_STORAGE_DIR, FENCEKEEPER_BIND, ...). peers comes only from the"
              + " file: FENCEKEEPER_PEERS and FENCEKEEPER_ENDPOINTS are for clients.")
  private Path configFile;

  @Option(
      names = "--join",
      description = "Start without the group, to be added to a running cluster with `members add`.")
  private boolean join;

  // `up` passes its own pid so that its nodes never outlive it, even when it is killed with -9.
  @Option(names = "--parent-pid", hidden = true)
  private Long parentPid;

  private final FencekeeperServer.StateMachineFactory stateMachines;

  ServerCommand(CliContext context) {
    this(context, FencingStateMachine::new);
  }

  /** A {@code server} whose node runs the state machine {@code stateMachines} makes. */
  ServerCommand(CliContext context, FencekeeperServer.StateMachineFactory stateMachines) {
    this.context = context;
    this.stateMachines = stateMachines;
  }

  @Override
  public Integer call() throws IOException, InterruptedException {
    // Before anything logs: logback reads this once, when it starts.
    if (System.getProperty(LOG_LEVEL_PROPERTY) == null) {
      System.setProperty(LOG_LEVEL_PROPERTY, "INFO");
    }
    for (String clientVariable : List.of(LocalDefaults.ENV_PEERS, LocalDefaults.ENV_ENDPOINTS)) {
      if (context.env(clientVariable, null) != null) {
        context
            .err()
            .println(
                "fencekeeper server: "
                    + clientVariable
                    + " is for clients and is ignored here: a node's peers come from its"
                    + " --config file");
      }
    }
    ClusterConfig config =
        ClusterConfig.load(configFile == null ? null : context.resolve(configFile), context.env());
    String id =
        config.self().id(); // a config without node.id cannot run a node: say so before starting
    chooseLogDir(config);
    // Loading the config touched Ratis classes, which may have started Logback already.
    reloadLogging();

    // Before the node starts: a SIGHUP that arrives while it starts (it logs "serving on" before
    // start returns) must not reach the JVM's default, which stops it.
    AtomicReference<FencekeeperServer> started = new AtomicReference<>();
    Optional<HangupHandler> hangup =
        HangupHandler.install(
            () -> {
              FencekeeperServer running = started.get();
              if (running == null) {
                LOG.info("SIGHUP: node {} is starting and reads its TLS files as it does", id);
              } else {
                reloadCertificates(running, id);
              }
            });
    if (config.security().tlsEnabled() && hangup.filter(h -> !h.receivesSignal()).isPresent()) {
      LOG.warn(
          "SIGHUP: node {} was started with SIGHUP ignored (under nohup, or by a parent that"
              + " ignores it), so SIGHUP cannot reload its TLS files: restart the node to load new"
              + " ones, or start it without ignoring SIGHUP",
          id);
    }
    FencekeeperServer server;
    try {
      server = FencekeeperServer.start(config, join, stateMachines);
    } catch (ClusterRefusedException e) {
      hangup.ifPresent(HangupHandler::close);
      // One line on stderr; into the log file as well when the node logs to one.
      if (config.logDir().isPresent()) {
        LOG.error("{}", e.getMessage());
      }
      context.err().println("fencekeeper: " + e.getMessage());
      return ExitCode.NOT_THIS_CLUSTER.code();
    } catch (StorageFullException e) {
      hangup.ifPresent(HangupHandler::close);
      context.err().println("fencekeeper: node " + id + " did not start: " + e.getMessage());
      return ExitCode.STORAGE_FULL.code();
    } catch (IOException e) {
      hangup.ifPresent(HangupHandler::close);
      // E.g. storage.dir is not writable. (A taken port never gets here: Ratis exits the JVM with
      // 1.)
      context.err().println("fencekeeper: node " + id + " could not start: " + e.getMessage());
      return ExitCode.USAGE.code();
    }
    started.set(server);
    CountDownLatch mustStop = new CountDownLatch(1);
    Termination termination =
        Termination.onSignal(
            () -> {
              // Into the log file too: with log.dir set, stderr is not where an operator looks.
              LOG.info("node {} was told to stop (SIGTERM or Ctrl-C)", id);
              context.err().println("fencekeeper: stopping node " + id);
              closeQuietly(server);
            });
    if (parentPid != null) {
      Optional<ProcessHandle> parent = ProcessHandle.of(parentPid);
      parent.ifPresentOrElse(p -> p.onExit().thenRun(mustStop::countDown), mustStop::countDown);
    }
    server.stateMachine().diverged().thenRun(mustStop::countDown);
    server.storageExhausted().thenRun(mustStop::countDown);
    // Until the parent (if any) is gone or the replica stopped; a signal exits on its own.
    mustStop.await();
    termination.close();
    hangup.ifPresent(HangupHandler::close);
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
   * The rolling log file goes to {@code log.dir}, created private to this user, when it is set;
   * otherwise the node logs to stderr. Logback reads the property when it is configured.
   */
  static void chooseLogDir(ClusterConfig config) {
    Optional<Path> dir = config.logDir();
    if (dir.isPresent()) {
      try {
        PrivateFiles.directory(dir.get());
      } catch (IOException e) {
        throw new ConfigException("log.dir: cannot make '" + dir.get() + "': " + e.getMessage());
      }
      System.setProperty(LOG_DIR_PROPERTY, dir.get().toAbsolutePath().toString());
    } else {
      System.clearProperty(LOG_DIR_PROPERTY);
    }
  }

  /** SIGHUP: new TLS material for new connections; a failure leaves the node as it was. */
  private static void reloadCertificates(FencekeeperServer server, String id) {
    try {
      LOG.info("SIGHUP: node {} reloaded its TLS certificate: {}", id, server.reloadCertificates());
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "SIGHUP: node {} keeps its current TLS certificate; reloading failed: {}",
          id,
          e.getMessage());
    }
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
