package dev.fencekeeper.tools.drill;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.config.Durations;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.tools.CliContext;
import dev.fencekeeper.tools.Directories;
import dev.fencekeeper.tools.DriverManagerDataSource;
import dev.fencekeeper.tools.ExitCode;
import dev.fencekeeper.tools.FencekeeperCli;
import dev.fencekeeper.tools.RunningCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code drill <name>}: a fault scenario against real node processes, checked by the history
 * checker.
 */
@Command(
    name = "drill",
    mixinStandardHelpOptions = true,
    header = "Run a failover drill against real node processes and check the history it records.",
    description = {
      "Starts its own three-node cluster (one JVM per node, files under a temp dir), runs client"
          + " workers acquiring, renewing, writing, reading and releasing on a few contended"
          + " resources, injects the drill's fault, heals it, reads the final state, and checks"
          + " every recorded operation: no stale write accepted, no acknowledged write lost, tokens"
          + " unique and increasing, one live lease per resource, linearizable reads. Prints a"
          + " timeline, figures and a verdict; on a violation, the operations that show it and the"
          + " command that replays the drill. See docs/drills.md.",
      "Drills: stale-writer, leader-kill, leader-pause, restart-all, rolling-restart, clock-skew,"
          + " membership, partition, disk-full.",
      "stale-writer --jdbc-url URL [--user U --password-file F] replays the same timeline against"
          + " your own database through fencekeeper-jdbc's guard row (see"
          + " docs/external-stores.md).",
      "Exit 0 on a pass, 18 on a violation (or an undecided check), 11 if the drill could not run"
          + " (no leader), 2 on bad usage or when the machine cannot run it (partition and"
          + " disk-full need root)."
    })
public final class DrillCommand implements Callable<Integer> {
  static final int DEFAULT_WORKERS = 4;

  static final Map<String, Supplier<Drill>> DRILLS = new LinkedHashMap<>();

  static {
    DRILLS.put("stale-writer", StaleWriterDrill::new);
    DRILLS.put("leader-kill", ProcessFaultDrills.LeaderKill::new);
    DRILLS.put("leader-pause", ProcessFaultDrills.LeaderPause::new);
    DRILLS.put("restart-all", ProcessFaultDrills.RestartAll::new);
    DRILLS.put("rolling-restart", ProcessFaultDrills.RollingRestart::new);
    DRILLS.put("clock-skew", ProcessFaultDrills.ClockSkew::new);
    DRILLS.put("membership", ProcessFaultDrills.Membership::new);
    DRILLS.put("partition", PartitionDrill::new);
    DRILLS.put("disk-full", DiskFullDrill::new);
  }

  private final CliContext context;

  @Parameters(index = "0", paramLabel = "NAME", description = "Which drill (see above).")
  private String name;

  @Option(
      names = "--duration",
      paramLabel = "D",
      defaultValue = "30s",
      description =
          "How long faults are injected under load (default ${DEFAULT-VALUE}); e.g. 20s, 10m.")
  private String durationText;

  @Option(
      names = "--seed",
      paramLabel = "N",
      description =
          "Seed for the workload's and the fault schedule's choices (default: random, printed).")
  private Long seed;

  @Option(
      names = "--workers",
      paramLabel = "N",
      defaultValue = "" + DEFAULT_WORKERS,
      description = "Client workers in the workload (default ${DEFAULT-VALUE}).")
  private int workers;

  @Option(names = "--json", description = "Print one JSON object instead of the report.")
  private boolean json;

  @Option(
      names = "--endpoints",
      paramLabel = "HOST:PORT,...",
      description =
          "Use this running cluster, named by its nodes' client ports, instead of starting one"
              + " (only drills whose fault is on the client side: stale-writer).")
  private String endpoints;

  @Option(
      names = "--peers",
      paramLabel = "ID@HOST:PORT,...",
      description = "Deprecated: the running cluster's Raft addresses; give --endpoints.")
  private String peers;

  @Option(
      names = "--keep-files",
      description = "Keep the temp dir (node logs, data) even after a pass.")
  private boolean keepFiles;

  @Option(
      names = "--jdbc-url",
      paramLabel = "URL",
      description =
          "stale-writer only: replay the paused-worker timeline against this database instead of"
              + " the cluster's own store, fenced by fencekeeper-jdbc's guard row (creates and"
              + " drops two tables of its own). Drivers in the jar: PostgreSQL.")
  private String jdbcUrl;

  @Option(names = "--user", paramLabel = "U", description = "Database user for --jdbc-url.")
  private String user;

  @Option(
      names = "--password-file",
      paramLabel = "F",
      description =
          "File whose first line is the database password for --jdbc-url (never on the command"
              + " line).")
  private Path passwordFile;

  private final String nodeMain;

  DrillCommand(CliContext context) {
    this(context, FencekeeperCli.class.getName());
  }

  /**
   * A {@code drill} whose own nodes run {@code nodeMain}'s {@code main} (see {@link
   * DrillCluster#DrillCluster(Path, DrillLog, String)}).
   */
  DrillCommand(CliContext context, String nodeMain) {
    this.context = context;
    this.nodeMain = nodeMain;
  }

  @Override
  public Integer call() throws Exception {
    ClusterConfig external =
        RunningCluster.of(endpoints, peers, context.err()::println).orElse(null);
    Supplier<Drill> factory = DRILLS.get(name);
    if (factory == null) {
      throw new ConfigException(
          "no drill '" + name + "'; choose one of " + String.join(", ", DRILLS.keySet()));
    }
    Duration duration = Durations.parse("--duration", durationText);
    if (workers < 1 || workers > 64) {
      throw new ConfigException("--workers: '" + workers + "' must be 1..64");
    }
    if (jdbcUrl != null) {
      return runAgainstDatabase(external);
    }
    if (user != null || passwordFile != null) {
      throw new ConfigException("--user and --password-file go with --jdbc-url");
    }
    Drill drill = factory.get();
    if (external != null && !drill.worksWithExternalCluster()) {
      throw new ConfigException(
          "drill "
              + name
              + " kills, pauses or rewires nodes, so it needs its own cluster;"
              + " drop --endpoints (only "
              + DRILLS.keySet().stream()
                  .filter(n -> DRILLS.get(n).get().worksWithExternalCluster())
                  .collect(Collectors.joining(", "))
              + " can use a running one)");
    }
    long chosenSeed = seed != null ? seed : new SecureRandom().nextInt(1_000_000);
    DrillLog log = new DrillLog(context.err(), System.nanoTime(), false);
    log.info("drill " + name + ": " + drill.summary() + " (seed " + chosenSeed + ")");
    Path root = Files.createTempDirectory("fencekeeper-drill-" + name + "-");
    DrillResult result;
    try {
      result =
          new DrillRunner(
                  drill,
                  new DrillRunner.Settings(duration, chosenSeed, workers, external),
                  log,
                  nodeMain)
              .run(root);
    } catch (DrillException e) {
      context
          .err()
          .println(
              "fencekeeper drill "
                  + name
                  + ": could not run: "
                  + e.getMessage()
                  + " (files kept in "
                  + root
                  + ")");
      return e.exitCode().code();
    } catch (RuntimeException e) {
      context
          .err()
          .println("fencekeeper drill " + name + ": could not run (files kept in " + root + "):");
      e.printStackTrace(context.err());
      return ExitCode.UNEXPECTED.code();
    }
    if (json) {
      DrillReport.printJson(result, context.out());
    } else {
      DrillReport.printText(result, context.out());
    }
    if (result.verdict().passed() && !keepFiles) {
      Directories.deleteTree(root);
    }
    return result.verdict().passed() ? ExitCode.SUCCESS.code() : ExitCode.CHECK_FAILED.code();
  }

  /**
   * {@code stale-writer --jdbc-url}: the timeline against the user's database, on {@code
   * --endpoints} or our own nodes.
   */
  private int runAgainstDatabase(ClusterConfig external) throws Exception {
    if (!name.equals("stale-writer")) {
      throw new ConfigException("--jdbc-url goes with the stale-writer drill only");
    }
    String password = null;
    if (passwordFile != null) {
      List<String> lines = Files.readAllLines(passwordFile);
      password = lines.isEmpty() ? "" : lines.get(0);
    }
    DataSource db = new DriverManagerDataSource(jdbcUrl, user, password);
    try (Connection probe = db.getConnection()) {
      probe.getMetaData();
    } catch (SQLException e) {
      context
          .err()
          .println(
              "fencekeeper drill stale-writer: cannot connect to "
                  + jdbcUrl
                  + ": "
                  + e.getMessage());
      return ExitCode.UNAVAILABLE.code();
    }
    DrillLog log = new DrillLog(context.err(), System.nanoTime(), false);
    Path root = Files.createTempDirectory("fencekeeper-drill-jdbc-");
    DrillCluster cluster = new DrillCluster(root, log, nodeMain);
    JdbcStaleWriterDrill.Outcome outcome;
    try {
      ClusterConfig config;
      if (external != null) {
        config = DrillCluster.clientConfig(external);
      } else {
        List<PeerAddress> members = DrillRunner.freeLoopbackPeers(3);
        for (PeerAddress peer : members) {
          cluster.define(peer, members, null, 0);
        }
        for (DrillCluster.Node node : cluster.nodes()) {
          cluster.start(node.id());
        }
        log.info("cluster starting, leader " + cluster.awaitLeader(Duration.ofSeconds(90)));
        config = DrillCluster.clientConfig(members);
      }
      outcome = new JdbcStaleWriterDrill(db, config, context.err()).run();
    } catch (SQLException e) {
      context
          .err()
          .println(
              "fencekeeper drill stale-writer: the database refused the drill's own statements: "
                  + e.getMessage()
                  + " (files kept in "
                  + root
                  + ")");
      return ExitCode.UNEXPECTED.code();
    } finally {
      cluster.close();
    }
    if (json) {
      Map<String, Object> report = new LinkedHashMap<>();
      report.put("drill", "stale-writer");
      report.put("jdbcUrl", jdbcUrl);
      report.put("passed", outcome.passed());
      report.put("verdict", outcome.verdict());
      report.put("tokenA", outcome.tokenA());
      report.put("tokenB", outcome.tokenB());
      report.put("timeline", outcome.timeline());
      context.out().println(new ObjectMapper().writeValueAsString(report));
    } else {
      context.out().println("drill stale-writer against " + jdbcUrl);
      outcome.timeline().forEach(line -> context.out().println("  " + line));
      context.out().println("verdict: " + outcome.verdict());
    }
    if (outcome.passed() && !keepFiles) {
      Directories.deleteTree(root);
    }
    return outcome.passed() ? ExitCode.SUCCESS.code() : ExitCode.CHECK_FAILED.code();
  }
}
