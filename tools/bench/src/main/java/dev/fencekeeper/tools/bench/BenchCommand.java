package dev.fencekeeper.tools.bench;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.tools.CliContext;
import dev.fencekeeper.tools.DurationConverter;
import dev.fencekeeper.tools.ExitCode;
import dev.fencekeeper.tools.Json;
import dev.fencekeeper.tools.NodeProcesses;
import dev.fencekeeper.tools.bench.Runner.Measurement;
import dev.fencekeeper.tools.bench.Workload.Worker;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.ratis.client.RaftClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bench}: throughput, latency, CPU and failover figures, and the generator of
 * docs/benchmarks.md.
 */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    header = "Measure throughput, latency, CPU and failover; regenerate docs/benchmarks.md.",
    description = {
      "Starts a three-node cluster of separate processes under a temp dir (or uses --peers) and"
          + " runs each workload at each concurrency: a warm-up, then a measured window. Workloads:"
          + " W1 lock churn (acquire, write, release), W2 fenced writes, W3 stale replay (every"
          + " stale write must be rejected), W4 linearizable reads, W5 renew storm, W6 contended"
          + " blocking acquire. W1, W2, W3 and W6 go through the Java client's Lease API"
          + " (client.acquire returns a self-renewing Lease; lease.write; lease.close);"
          + " --api lease,raw adds rows of W1, W2 and W3 through the raw token path"
          + " (acquireToken, write with a token, release), labelled \"raw token\".",
      "Then, on its own cluster, failover: leader kill -9 under write load until writes succeed"
          + " again, and a holder process killed -9 until its resource is granted to a waiter."
          + " --baseline ratis runs W2 and W4 against a bare-Ratis counter cluster on the same Raft"
          + " settings, in the same run; --baseline zookeeper,etcd runs W1, W2, W3 (and on"
          + " ZooKeeper W6) and the leader kill against three-member ZooKeeper 3.8 and etcd 3.4"
          + " clusters from their Debian packages, each right after fencekeeper's. With W6, the"
          + " hand-off too (all workers in line for one resource: release committed → next holder's"
          + " first accepted write), on fencekeeper and ZooKeeper.",
      "--state-keys N loads N keys of 100 bytes into a cluster of its own and reports each node's"
          + " heap after a full GC, snapshot time and size, and the time from kill -9 and restart"
          + " of every node until a linearizable read and a write succeed (the 1,000,000-key"
          + " target). `--workload none` runs no workload (with --failover-trials 0: the state"
          + " figures alone).",
      "--snapshot-load runs W2 at the highest --concurrency while the nodes take snapshots, on"
          + " two clusters of their own loaded with --state-keys keys (1,000,000 if not given):"
          + " one with snapshots far apart, one with Ratis taking a snapshot every few seconds"
          + " (every --snapshot-every entries if given), and reports writes/s, p50, p99, p99.9 and"
          + " max of both and the snapshots the nodes wrote in each window.",
      "--many-leases N: one client built with the defaults holds N self-renewing leases of"
          + " TTL 10 s with W2 (highest --concurrency) on top, through the same client: W2 alone,"
          + " the leases alone, W2 beside them; leases still valid, log entries the cluster"
          + " applied per second, node CPU. --node-w2: W2 at 1 and 16 workers through the Java"
          + " client and through the Node client (clients/node/bench/w2.mjs, run by `node`),"
          + " alternating on the same cluster, with the Node/Java ratio.",
      "Prints Markdown tables (or one JSON object with --json); --output FILE writes the whole"
          + " benchmarks document, keeping its hand-written profile-findings section.",
      "Exit 0, or 18 if W3 saw a stale write accepted or not definitely rejected."
    },
    subcommands = {CounterNodeCommand.class, JdbcBenchCommand.class})
public final class BenchCommand implements Callable<Integer> {
  private final CliContext context;

  @Option(
      names = "--peers",
      paramLabel = "HOST:PORT,...",
      description =
          "Measure this running cluster instead of starting one (no failover figures then).")
  private String peers;

  @Option(
      names = "--workload",
      paramLabel = "W1,W2,...",
      defaultValue = "W1,W2,W3,W4,W5,W6",
      description = "Workloads to run (default: all; `none` for none).")
  private String workloads;

  @Option(
      names = "--concurrency",
      paramLabel = "N,N,...",
      defaultValue = "1,16,64",
      description = "Worker counts to sweep (default: ${DEFAULT-VALUE}).")
  private String concurrency;

  /** --duration and --warmup: the window of each workload and concurrency, and the load before. */
  @Mixin private MeasureWindow timing = new MeasureWindow();

  @Option(
      names = "--jit-warmup",
      paramLabel = "DURATION",
      defaultValue = DEFAULT_JIT_WARMUP,
      converter = DurationConverter.ZeroAllowed.class,
      description =
          "At most this long, unrecorded load of every chosen workload on a freshly started cluster"
              + " before the first one is measured, in rounds of 10 s until the node JVMs' JIT"
              + " compilers use under 2 %% of their CPU (default: ${DEFAULT-VALUE}; 0s skips it).")
  private Duration jitWarmup;

  @Option(
      names = "--phases",
      paramLabel = "cold,settled",
      defaultValue = "settled",
      description =
          "When in the clusters' life to measure: `cold`, every system's cluster freshly started"
              + " and no JIT warm-up (its first window after --cold-warmup), as a user's first"
              + " benchmark sees it; `settled`, after --jit-warmup. `cold,settled` measures both,"
              + " cold first (default: ${DEFAULT-VALUE}).")
  private String phases;

  @Option(
      names = "--cold-warmup",
      paramLabel = "DURATION",
      defaultValue = "15s",
      converter = DurationConverter.ZeroAllowed.class,
      description =
          "Cold phase: unmeasured load on each system's freshly started cluster before its first"
              + " window; its later windows take --warmup (default: ${DEFAULT-VALUE}).")
  private Duration coldWarmup;

  @Option(
      names = "--clients",
      paramLabel = "N",
      defaultValue = "1",
      description =
          "FencingClient instances the workers share round-robin (default: ${DEFAULT-VALUE}).")
  private int clients;

  @Option(
      names = "--leases",
      paramLabel = "N",
      defaultValue = "1000",
      description = "W5: leases renewed at TTL/3 in total (default: ${DEFAULT-VALUE}).")
  private int leases;

  @Option(
      names = "--failover-trials",
      paramLabel = "N",
      defaultValue = "3",
      description =
          "Leader kills and holder kills, each (default: ${DEFAULT-VALUE}; 0 skips them).")
  private int failoverTrials;

  @Option(
      names = "--baseline",
      paramLabel = "ratis,zookeeper,etcd",
      description =
          "`ratis`: also run W2 and W4 against a bare-Ratis counter cluster, same settings;"
              + " `zookeeper`, `etcd`: also run the workloads against a three-member cluster of"
              + " that system (Debian packages `zookeeper`, `etcd-server`). Comma-separated.")
  private String baseline;

  @Option(
      names = "--state-keys",
      paramLabel = "N",
      defaultValue = "0",
      description =
          "Also measure heap, snapshot and restart with N keys of 100 bytes, on a cluster of its"
              + " own (default: 0, skipped; the target is 1000000).")
  private int stateKeys;

  @Option(
      names = "--snapshot-load",
      description =
          "Also measure W2 while snapshots are taken, against W2 without, each on a cluster of its"
              + " own loaded with --state-keys keys (1000000 if not given).")
  private boolean snapshotLoad;

  @Option(
      names = "--snapshot-every",
      paramLabel = "ENTRIES",
      description =
          "--snapshot-load: snapshot.auto-trigger.entries of the cluster with snapshots (default:"
              + " the entries the window without snapshots applied in 4 s).")
  private Long snapshotEvery;

  @Option(
      names = "--cost-curve",
      description =
          "Also measure the cost curve: W2 at each of --cost-curve-workers on the bench's cluster,"
              + " and heap, snapshot and restart at each of --cost-curve-keys, each on a cluster of"
              + " its own; drawn as a PNG next to --output (FILE's name with -cost-curve.png).")
  private boolean costCurve;

  @Option(
      names = "--cost-curve-workers",
      paramLabel = "N,N,...",
      defaultValue = CostCurve.DEFAULT_WORKERS,
      description = "The cost curve's worker counts, ascending (default: ${DEFAULT-VALUE}).")
  private String costCurveWorkers;

  @Option(
      names = "--cost-curve-keys",
      paramLabel = "N,N,...",
      defaultValue = CostCurve.DEFAULT_KEYS,
      description =
          "The cost curve's state sizes in keys of 100 bytes, ascending (default:"
              + " ${DEFAULT-VALUE}; 10,000,000 keys need about 3.5 GB of heap per node).")
  private String costCurveKeys;

  @Option(
      names = "--api",
      paramLabel = "lease,raw",
      defaultValue = ClientApi.DEFAULT_NAMES,
      description =
          "Client path of W1, W2, W3: `lease`, the Lease API applications call (client.acquire →"
              + " Lease → lease.write → close; W6 always takes it); `raw`, the token-level path"
              + " (acquireToken, write with the token, release), rows labelled \"raw token\"."
              + " Comma-separated; the first is the one ratios and targets use (default:"
              + " ${DEFAULT-VALUE}).")
  private String api;

  @Option(
      names = "--many-leases",
      paramLabel = "N",
      defaultValue = "0",
      description =
          "Also measure one client built with the defaults holding N leases of TTL 10 s (each"
              + " renewing itself) with W2 at the highest --concurrency on top: leases still valid,"
              + " log entries applied per second, node CPU, and W2's writes/s beside the leases"
              + " against W2 alone (default: 0, skipped).")
  private int manyLeases;

  @Option(
      names = "--node-w2",
      description =
          "Also run W2 at 1 and 16 workers through the Java client's Lease API and through the"
              + " Node client (clients/node/bench/w2.mjs as a child `node` process; the client"
              + " must be built: npm ci && npm run build), alternating on the same cluster, and"
              + " report the Node/Java ratio.")
  private boolean nodeW2;

  @Option(
      names = "--node-client",
      paramLabel = "DIR",
      description =
          "--node-w2: the Node client's directory (default: clients/node of the repository the"
              + " bench was built in).")
  private Path nodeClient;

  @Option(
      names = "--output",
      paramLabel = "FILE",
      description = "Write the benchmarks document (e.g. docs/benchmarks.md) there as well.")
  private Path output;

  @Option(names = "--json", description = "Print one JSON object instead of Markdown tables.")
  private boolean json;

  BenchCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() throws Exception {
    SnapshotLoad.validate(snapshotLoad, snapshotEvery, peers != null);
    List<Workload> chosen = parseWorkloads();
    List<ClientApi> apis = ClientApi.parse(api);
    if (manyLeases < 0 || manyLeases > MAX_MANY_LEASES) {
      throw new ConfigException(
          "--many-leases: '" + manyLeases + "' must be 0 (skipped) to " + MAX_MANY_LEASES);
    }
    if (nodeClient != null && !nodeW2) {
      throw new ConfigException("--node-client needs --node-w2");
    }
    Path nodeClientDir =
        nodeW2 ? NodeW2.clientDir(nodeClient == null ? null : context.resolve(nodeClient)) : null;
    String nodeVersion = nodeW2 ? NodeW2.check(nodeClientDir) : null;
    List<Integer> concurrencies = parseConcurrency();
    List<Phase> phases = Phase.parse(this.phases);
    List<String> baselines = baseline == null ? List.of() : AnchorRun.parse(baseline);
    List<Integer> curveWorkers =
        CostCurve.parseCounts("--cost-curve-workers", costCurveWorkers, 1, 4096);
    List<Integer> curveKeys =
        CostCurve.parseCounts("--cost-curve-keys", costCurveKeys, 1, 100_000_000);
    if (clients < 1
        || leases < 1
        || failoverTrials < 0
        || timing.duration.isZero()
        || timing.duration.isNegative()
        || timing.warmup.isNegative()
        || coldWarmup.isNegative()
        || jitWarmup.isNegative()) {
      throw new ConfigException(
          "--clients and --leases must be ≥ 1, --failover-trials ≥ 0, --duration > 0,"
              + " --warmup, --cold-warmup and --jit-warmup ≥ 0");
    }
    if (costCurve && (peers != null || output == null)) {
      throw new ConfigException(
          "--cost-curve needs a cluster the bench starts (not --peers): its state sizes kill and"
              + " restart every node; and --output FILE: its chart is drawn next to the document");
    }
    if (stateKeys < 0 || (stateKeys > 0 && peers != null)) {
      throw new ConfigException(
          "--state-keys must be ≥ 0, and needs a cluster the bench starts (not --peers):"
              + " it kills and restarts every node");
    }
    PrintStream progress = context.err();
    String runId = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
    boolean mainCluster =
        !chosen.isEmpty()
            || (peers == null && failoverTrials > 0)
            || costCurve
            || nodeW2
            || manyLeases > 0;
    ClusterConfig described = peers != null ? forPeers(peers) : null;
    BenchCluster cluster =
        described != null
            ? BenchCluster.external(described)
            : mainCluster ? BenchCluster.startLocal(BenchCluster.Kind.FENCEKEEPER) : null;
    if (cluster == null) {
      // Only clusters of their own (--state-keys, --snapshot-load); their nodes run the settings
      // of ClusterConfig.local.
      BenchReport report =
          new BenchReport(
              commandLine(),
              ClusterConfig.local(ClusterConfig.DEFAULT_BASE_PORT),
              "3 fencekeeper node processes on 127.0.0.1 started by the bench (data in a temp dir,"
                  + " fsync on; node JVM flags "
                  + nodeJvmFlags()
                  + ")");
      measureState(report, curveKeys, concurrencies, runId, progress);
      return finish(report, progress);
    }
    String description =
        cluster.isLocal()
            ? "3 fencekeeper node processes on 127.0.0.1 started by the bench (data in a temp dir,"
                + " fsync on; node JVM flags "
                + nodeJvmFlags()
                + "), "
                + clients
                + " FencingClient(s) in the bench process (JVM flags "
                + benchJvmFlags()
                + ")"
            : "the running cluster at "
                + peers
                + ", "
                + clients
                + " FencingClient(s) (bench JVM flags "
                + benchJvmFlags()
                + ")";
    BenchReport report = new BenchReport(commandLine(), cluster.config(), description);
    report.phases = phases;
    report.apis = apis;
    if (phases.contains(Phase.COLD)) {
      report.coldWarmup = coldWarmup;
    }
    BaselineRun baselineRun = null;
    AnchorRun anchors = null;
    try {
      if (baselines.contains(AnchorRun.RATIS)) {
        if (chosen.stream().noneMatch(Baseline::covers)) {
          progress.println(
              "bench: --baseline ratis has nothing to compare: it covers W2 and W4 only");
        } else {
          baselineRun = new BaselineRun();
        }
      }
      Duration leaseTtl = timing.warmup.plus(timing.duration).plusSeconds(60);
      anchors = AnchorRun.start(baselines, clients, progress);
      List<FencingClient> fencing = new ArrayList<>();
      for (int i = 0; i < clients; i++) {
        fencing.add(FencingClient.builder().config(cluster.config()).owner("bench").build());
      }
      try {
        awaitReady(fencing.get(0), runId);
        Runner.Probe probe =
            new Runner.Probe() {
              @Override
              public List<Long> serverPids() {
                return cluster.serverPids(fencing.get(0));
              }

              @Override
              public long term() {
                return cluster.term(fencing.get(0));
              }

              @Override
              public long appliedIndex() {
                return cluster.appliedIndex(fencing.get(0));
              }
            };
        Sweep sweep =
            new Sweep(
                report, chosen, apis, concurrencies, fencing, probe, baselineRun, anchors, runId);
        if (phases.contains(Phase.COLD)) {
          sweep.run(Phase.COLD, progress);
        }
        if (phases.contains(Phase.SETTLED)) {
          if (cluster.isLocal()) {
            report.jitWarmup = warmUpJit(progress, report, sweep::jitWarmupWorkers, probe);
          }
          if (baselineRun != null) {
            baselineRun.warmUp(progress);
          }
          AnchorRun warming = anchors;
          warming.warmUp(
              leaseTtl,
              (system, roundWorkers, anchorProbe) ->
                  warmUpJit(progress, null, roundWorkers, anchorProbe));
          sweep.run(Phase.SETTLED, progress);
        }
        if (costCurve) {
          report.costCurve = new CostCurve.Figures(sweep.costCurveWorkers(progress), List.of());
        }
        if (nodeW2) {
          progress.println("bench: W2 through the Java client and the Node client, alternating");
          report.nodeW2 =
              NodeW2.measure(
                  fencing.get(0),
                  cluster.config(),
                  nodeClientDir,
                  nodeVersion,
                  probe,
                  timing.warmup,
                  timing.duration,
                  runId,
                  progress);
        }
        if (manyLeases > 0) {
          report.manyLeases =
              ManyLeases.measure(
                  cluster.config(),
                  probe,
                  manyLeases,
                  concurrencies.stream().mapToInt(Integer::intValue).max().orElseThrow(),
                  timing.warmup,
                  timing.duration,
                  runId,
                  progress);
        }
        if (cluster.isLocal() && failoverTrials > 0) {
          report.leaderKills.addAll(
              Failover.leaderKills(cluster, fencing.get(0), runId, failoverTrials, progress));
          report.deadHolders.addAll(
              Failover.deadHolders(cluster, fencing.get(0), runId, failoverTrials, progress));
          report.anchorLeaderKills.putAll(anchors.leaderKills(runId, failoverTrials, progress));
        }
      } finally {
        fencing.forEach(FencingClient::close);
      }
    } finally {
      if (baselineRun != null) {
        baselineRun.close();
      }
      if (anchors != null) {
        anchors.close();
      }
      cluster.close();
    }
    measureState(report, curveKeys, concurrencies, runId, progress);
    return finish(report, progress);
  }

  /**
   * The figures of clusters of their own, after the main cluster is gone: --state-keys, the cost
   * curve's state sizes and --snapshot-load.
   */
  private void measureState(
      BenchReport report,
      List<Integer> curveKeys,
      List<Integer> concurrencies,
      String runId,
      PrintStream progress)
      throws Exception {
    if (stateKeys > 0) {
      report.state = StateSize.measure(stateKeys, runId, progress);
    }
    if (snapshotLoad) {
      report.snapshotLoad =
          SnapshotLoad.measure(
              stateKeys > 0 ? stateKeys : SnapshotLoad.DEFAULT_KEYS,
              concurrencies.stream().mapToInt(Integer::intValue).max().orElseThrow(),
              snapshotEvery,
              timing.warmup,
              timing.duration,
              runId + "-snapshots",
              progress);
    }
    if (costCurve) {
      List<StateSize.Figures> states = new ArrayList<>();
      for (int keys : curveKeys) {
        progress.printf("bench: cost curve: %,d keys%n", keys);
        states.add(
            keys == stateKeys && report.state != null
                ? report.state
                : StateSize.measure(keys, runId + "-curve" + keys, progress));
      }
      List<CostCurve.WorkerPoint> workers =
          report.costCurve == null ? List.of() : report.costCurve.workers();
      report.costCurve = new CostCurve.Figures(workers, states);
    }
  }

  private Integer finish(BenchReport report, PrintStream progress) throws IOException {
    report.loadAtEnd = BenchReport.loadAverage();
    Path file = output == null ? null : context.resolve(output);
    if (file != null) {
      Path chart = CostCurve.chartFor(file);
      if (report.costCurve != null) {
        CostCurve.draw(report.costCurve, chart);
        progress.println("bench: wrote " + chart);
      }
      if (Files.isRegularFile(chart)) {
        // Without --cost-curve, the chart an earlier run drew beside the document stays linked.
        report.costCurveImage = chart.getFileName().toString();
      }
    }
    if (json) {
      Json.print(context.out(), report.toJson());
    } else {
      report.tables().forEach(context.out()::println);
      context.out().flush();
    }
    if (file != null) {
      String kept = BenchReport.preservedSection(file);
      if (file.getParent() != null) {
        Files.createDirectories(file.getParent());
      }
      Files.writeString(file, report.document(kept));
      progress.println("bench: wrote " + file);
    }
    var failure = report.w3Failure();
    if (failure.isPresent()) {
      progress.println("bench: FAILED: " + failure.get());
      return ExitCode.CHECK_FAILED.code();
    }
    return ExitCode.SUCCESS.code();
  }

  /**
   * The bare-Ratis counter cluster, started next to fencekeeper's so that each baseline measurement
   * runs right after the fencekeeper measurement it is compared with: the machine's other load
   * changes less in seconds than over a whole run.
   */
  private final class BaselineRun implements AutoCloseable {
    private final BenchCluster counter;
    private final List<RaftClient> raft = new ArrayList<>();
    private final Runner.Probe probe;

    BaselineRun() throws IOException, InterruptedException {
      counter = BenchCluster.startLocal(BenchCluster.Kind.COUNTER);
      try {
        for (int i = 0; i < clients; i++) {
          raft.add(Baseline.connect(counter.config()));
        }
        // Its JVMs start while fencekeeper's nodes are still starting, without the class archive:
        // on a loaded 2-core box they were seen to take over a minute to read their config.
        Baseline.awaitReady(raft.get(0), Duration.ofSeconds(180));
        probe =
            new Runner.Probe() {
              @Override
              public List<Long> serverPids() {
                return counter.serverPids(null);
              }

              @Override
              public long term() {
                return -1; // the counter nodes do not answer fencekeeper's node-info query
              }
            };
      } catch (InterruptedException | RuntimeException e) {
        close();
        throw e;
      }
    }

    void warmUp(PrintStream progress) throws InterruptedException {
      warmUpJit(
          progress,
          null,
          round -> {
            List<Worker> workers = new ArrayList<>();
            for (int i = 0; i < JIT_WARMUP_WORKERS; i++) {
              workers.add(
                  Baseline.worker(i % 2 == 0 ? Workload.W2 : Workload.W4, raft.get(i % clients)));
            }
            return workers;
          },
          probe);
    }

    Measurement measure(Workload w, int c, Duration warmupBefore) throws InterruptedException {
      return Runner.run(
          BenchReport.RATIS,
          w,
          c,
          clients,
          () -> {
            List<Worker> workers = new ArrayList<>();
            for (int i = 0; i < c; i++) {
              workers.add(Baseline.worker(w, raft.get(i % clients)));
            }
            return workers;
          },
          warmupBefore,
          timing.duration,
          probe);
    }

    @Override
    public void close() {
      raft.forEach(Baseline::close);
      counter.close();
    }
  }

  /**
   * The chosen workloads at each concurrency on fencekeeper, each followed right away by the same
   * measurement on the bare-Ratis baseline and the anchors, in one phase.
   */
  private final class Sweep {
    private final BenchReport report;
    private final List<Workload> chosen;
    private final List<ClientApi> apis;
    private final List<Integer> concurrencies;
    private final List<FencingClient> fencing;
    private final Runner.Probe probe;
    private final BaselineRun baselineRun;
    private final AnchorRun anchors;
    private final String runId;
    private final Duration leaseTtl;

    /** The systems that have had their first cold window: their later ones take --warmup. */
    private final java.util.Set<String> warmedCold = new java.util.HashSet<>();

    Sweep(
        BenchReport report,
        List<Workload> chosen,
        List<ClientApi> apis,
        List<Integer> concurrencies,
        List<FencingClient> fencing,
        Runner.Probe probe,
        BaselineRun baselineRun,
        AnchorRun anchors,
        String runId) {
      this.report = report;
      this.chosen = chosen;
      this.apis = apis;
      this.concurrencies = concurrencies;
      this.fencing = fencing;
      this.probe = probe;
      this.baselineRun = baselineRun;
      this.anchors = anchors;
      this.runId = runId;
      this.leaseTtl = timing.warmup.plus(timing.duration).plus(coldWarmup).plusSeconds(60);
    }

    /**
     * The unmeasured load before a window on {@code system}: in the cold phase, --cold-warmup
     * before the system's first window (its cluster's first load), --warmup before the others.
     */
    private Duration warmupFor(Phase phase, String system) {
      return phase == Phase.COLD && warmedCold.add(system) ? coldWarmup : timing.warmup;
    }

    void run(Phase phase, PrintStream progress) throws InterruptedException {
      String id = runId + "-" + phase.label();
      List<Measurement> runs = phase == Phase.COLD ? report.coldRuns : report.runs;
      List<HandOff.Figures> handOffs = phase == Phase.COLD ? report.coldHandOffs : report.handOffs;
      progress.println("bench: " + phase.label() + " phase");
      progress.flush();
      for (Workload w : chosen) {
        for (int c : concurrencies) {
          for (ClientApi path : w.pathsFor(apis)) {
            Measurement m = fencekeeper(w, c, id, warmupFor(phase, BenchReport.FENCEKEEPER), path);
            runs.add(m);
            progress(progress, phase, m);
          }
          if (baselineRun != null && Baseline.covers(w)) {
            Measurement b = baselineRun.measure(w, c, warmupFor(phase, BenchReport.RATIS));
            runs.add(b);
            progress(progress, phase, b);
          }
          for (Measurement a :
              anchors.measure(
                  w, c, id, leaseTtl, system -> warmupFor(phase, system), timing.duration)) {
            runs.add(a);
            progress(progress, phase, a);
          }
          if (w == Workload.W6 && c >= 2) {
            List<HandOff.Figures> figures = new ArrayList<>();
            figures.add(
                HandOff.measure(
                    BenchReport.FENCEKEEPER,
                    c,
                    i ->
                        HandOff.fencekeeper(
                            fencing.get(i % clients), "bench/" + id + "/handoff/c" + c),
                    timing.warmup,
                    timing.duration));
            figures.addAll(anchors.handOffs(c, id, system -> timing.warmup, timing.duration));
            for (HandOff.Figures h : figures) {
              handOffs.add(h);
              progress.printf(
                  "bench: %s %s W6 hand-off x%d: %.0f hand-offs/s, release committed → next"
                      + " holder's first write p50 %.2f ms, p99 %.2f ms, %d failed%n",
                  phase.label(),
                  h.system(),
                  h.waiters(),
                  h.handOffsPerSecond(),
                  h.percentileMs(50),
                  h.percentileMs(99),
                  h.failed());
            }
          }
        }
      }
    }

    private Measurement fencekeeper(
        Workload w, int c, String id, Duration warmupBefore, ClientApi path)
        throws InterruptedException {
      return Runner.run(
              BenchReport.FENCEKEEPER,
              w,
              c,
              clients,
              () -> {
                List<Worker> workers = new ArrayList<>();
                for (int i = 0; i < c; i++) {
                  workers.add(w.worker(fencing.get(i % clients), id, i, c, leases, leaseTtl, path));
                }
                return workers;
              },
              warmupBefore,
              timing.duration,
              probe)
          .withApi(path);
    }

    /**
     * The JIT warm-up's workers of one round: every chosen workload on each of its chosen paths,
     * round-robin.
     */
    List<Worker> jitWarmupWorkers(int round) {
      List<Worker> workers = new ArrayList<>();
      for (int i = 0; i < JIT_WARMUP_WORKERS; i++) {
        Workload w = chosen.isEmpty() ? Workload.W2 : chosen.get(i % chosen.size());
        List<ClientApi> paths = w.pathsFor(apis);
        workers.add(
            w.worker(
                fencing.get(i % clients),
                runId + "-jit" + round,
                i,
                JIT_WARMUP_WORKERS,
                JIT_WARMUP_LEASES,
                leaseTtl.plus(JIT_WARMUP_ROUND),
                paths.get(i / Math.max(1, chosen.size()) % paths.size())));
      }
      return workers;
    }

    /** W2 at each of --cost-curve-workers, on the cluster as the sweeps left it. */
    List<CostCurve.WorkerPoint> costCurveWorkers(PrintStream progress) throws InterruptedException {
      List<CostCurve.WorkerPoint> points = new ArrayList<>();
      progress.println("bench: cost curve: W2 at each worker count");
      for (int c : CostCurve.parseCounts("--cost-curve-workers", costCurveWorkers, 1, 4096)) {
        Measurement m =
            fencekeeper(
                Workload.W2, c, runId + "-curve", timing.warmup, Workload.W2.pathsFor(apis).get(0));
        progress(progress, Phase.SETTLED, m);
        points.add(new CostCurve.WorkerPoint(c, m.opsPerSecond(), m.percentileMs(99)));
      }
      return points;
    }
  }

  /** The flags that change what is measured: the nodes' (NodeProcesses.nodeJvmFlags). */
  private static String nodeJvmFlags() {
    return "`" + NodeProcesses.describeNodeJvm() + "`";
  }

  /**
   * This JVM's -XX flags (the launcher's choice and FENCEKEEPER_JAVA_OPTS), without the class
   * archive's path.
   */
  private static String benchJvmFlags() {
    String flags =
        java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
            .filter(a -> a.startsWith("-XX:") && !a.startsWith("-XX:SharedArchiveFile="))
            .collect(java.util.stream.Collectors.joining(" "));
    return flags.isEmpty() ? "none" : "`" + flags + "`";
  }

  private static final int JIT_WARMUP_WORKERS = 64;

  /** --many-leases above this would take longer to acquire than any window is long. */
  static final int MAX_MANY_LEASES = 1_000_000;

  private static final int JIT_WARMUP_LEASES = 256;
  private static final Duration JIT_WARMUP_ROUND = Duration.ofSeconds(10);

  /**
   * Below this share of the nodes' CPU the compilers have caught up with the hot paths. Not zero:
   * HotSpot keeps recompiling a little for as long as load changes. 5 % was too early with C2 on
   * two cores: from 4-6 % down to 1 % the nodes' CPU per write still fell by a third
   * (docs/benchmarks.md, JIT).
   */
  private static final double JIT_SETTLED_PERCENT = 2;

  /**
   * Long enough for C2 on a 2-core box to settle under load (four to six minutes there); an upper
   * bound.
   */
  private static final int DEFAULT_JIT_WARMUP_SECONDS = 600;

  private static final String DEFAULT_JIT_WARMUP = DEFAULT_JIT_WARMUP_SECONDS + "s";

  /**
   * Load whose figures are thrown away, in rounds, until the node JVMs' JIT compilers settle or
   * --jit-warmup runs out: a freshly started node spends most of its CPU compiling for minutes (JIT
   * was half of the nodes' CPU after 30 s of load), and figures taken then measure the compiler,
   * not the service. Returns what the report says about it, or null when skipped.
   */
  private String warmUpJit(
      PrintStream progress,
      BenchReport safety,
      java.util.function.IntFunction<List<Worker>> roundWorkers,
      Runner.Probe probe)
      throws InterruptedException {
    if (jitWarmup.isZero()) {
      return null;
    }
    progress.println(
        "bench: warming up the node JVMs until their JIT compilers settle (at most "
            + jitWarmup.toSeconds()
            + " s)");
    progress.flush();
    long start = System.nanoTime();
    long deadline = start + jitWarmup.toNanos();
    double jitPercent;
    int rounds = 0;
    while (true) {
      int round = ++rounds;
      Duration length =
          Duration.ofNanos(
              Math.max(1, Math.min(JIT_WARMUP_ROUND.toNanos(), deadline - System.nanoTime())));
      Measurement m =
          Runner.run(
              "warm-up",
              Workload.W2,
              JIT_WARMUP_WORKERS,
              clients,
              () -> roundWorkers.apply(round),
              Duration.ZERO,
              length,
              probe);
      jitPercent = m.serverJitPercent();
      if (safety != null) {
        safety.warmupStaleAccepted +=
            m.staleAccepted(); // unrecorded figures, but never unchecked safety
      }
      progress.printf(
          java.util.Locale.ROOT,
          "bench: warm-up round %d: JIT compilers used %.0f %% of the nodes' CPU%n",
          round,
          jitPercent);
      progress.flush();
      if (Double.isNaN(jitPercent)
          || jitPercent < JIT_SETTLED_PERCENT
          || System.nanoTime() >= deadline) {
        break;
      }
    }
    long seconds = Math.round((System.nanoTime() - start) / 1e9);
    return String.format(
        java.util.Locale.ROOT,
        "%d s of unrecorded load in %d round(s); in the last one the"
            + " node JVMs' JIT compilers used %.0f %% of their CPU (%s)",
        seconds,
        rounds,
        jitPercent,
        jitPercent < JIT_SETTLED_PERCENT
            ? "settled: under " + (int) JIT_SETTLED_PERCENT + " %"
            : "not settled within --jit-warmup; early figures include compiling");
  }

  private static void progress(PrintStream out, Phase phase, Measurement m) {
    out.printf(
        "bench: %s %s %s x%d: %.0f %s/s, p50 %.2f ms, p99 %.2f ms, %d failed%s%s%n",
        phase.label(),
        m.system(),
        m.workload(),
        m.concurrency(),
        m.opsPerSecond(),
        m.workload().unit,
        m.percentileMs(50),
        m.percentileMs(99),
        m.failed(),
        m.staleAccepted() > 0 ? ", " + m.staleAccepted() + " STALE WRITES ACCEPTED" : "",
        m.failures().isEmpty() ? "" : " (all steps, warm-up included: " + m.failures() + ")");
    out.flush();
  }

  /** The cluster answers a command: a leader is elected and its takeover entry committed. */
  private static void awaitReady(FencingClient client, String runId) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    String resource = "bench/" + runId + "/ready";
    while (true) {
      Result r = client.acquireToken(resource, Duration.ofSeconds(1), "bench");
      if (r.code() == ResultCode.GRANTED) {
        client.release(resource, r.token());
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the cluster did not grant a lease within 60 s: " + r);
      }
      Thread.sleep(200);
    }
  }

  private List<Workload> parseWorkloads() {
    try {
      return Workload.parse(workloads);
    } catch (IllegalArgumentException e) {
      throw new ConfigException(
          "--workload: '"
              + workloads
              + "'; choose from "
              + Arrays.toString(Workload.values())
              + " or all");
    }
  }

  private List<Integer> parseConcurrency() {
    try {
      List<Integer> list =
          Arrays.stream(concurrency.split(",")).map(String::trim).map(Integer::parseInt).toList();
      if (list.isEmpty() || list.stream().anyMatch(c -> c < 1 || c > 4096)) {
        throw new NumberFormatException();
      }
      return list;
    } catch (NumberFormatException e) {
      throw new ConfigException(
          "--concurrency: '" + concurrency + "' must be numbers 1..4096 separated by commas");
    }
  }

  private static ClusterConfig forPeers(String peers) {
    try {
      return ClusterConfig.forPeers(peers);
    } catch (ConfigException e) {
      throw new ConfigException("--peers: " + e.getMessage());
    }
  }

  /** The command as it would be typed again, for the document's header. */
  private String commandLine() {
    List<String> parts =
        new ArrayList<>(
            List.of(
                "./fencekeeper",
                "bench",
                "--workload",
                workloads,
                "--concurrency",
                concurrency,
                "--duration",
                timing.duration.toMillis() % 1000 == 0
                    ? timing.duration.toSeconds() + "s"
                    : timing.duration.toMillis() + "ms",
                "--warmup",
                timing.warmup.toMillis() % 1000 == 0
                    ? timing.warmup.toSeconds() + "s"
                    : timing.warmup.toMillis() + "ms"));
    if (!jitWarmup.equals(Duration.ofSeconds(DEFAULT_JIT_WARMUP_SECONDS))) {
      parts.addAll(
          List.of(
              "--jit-warmup",
              jitWarmup.toMillis() % 1000 == 0
                  ? jitWarmup.toSeconds() + "s"
                  : jitWarmup.toMillis() + "ms"));
    }
    if (!phases.equals("settled")) {
      parts.addAll(List.of("--phases", phases, "--cold-warmup", seconds(coldWarmup)));
    }
    if (clients != 1) {
      parts.addAll(List.of("--clients", Integer.toString(clients)));
    }
    if (failoverTrials != 3) {
      parts.addAll(List.of("--failover-trials", Integer.toString(failoverTrials)));
    }
    if (baseline != null) {
      parts.addAll(List.of("--baseline", baseline));
    }
    if (peers != null) {
      parts.addAll(List.of("--peers", peers));
    }
    if (stateKeys > 0) {
      parts.addAll(List.of("--state-keys", Integer.toString(stateKeys)));
    }
    if (snapshotLoad) {
      parts.add("--snapshot-load");
    }
    if (snapshotEvery != null) {
      parts.addAll(List.of("--snapshot-every", Long.toString(snapshotEvery)));
    }
    if (!api.equals(ClientApi.DEFAULT_NAMES)) {
      parts.addAll(List.of("--api", api));
    }
    if (nodeW2) {
      parts.add("--node-w2");
    }
    if (nodeClient != null) {
      parts.addAll(List.of("--node-client", nodeClient.toString()));
    }
    if (manyLeases > 0) {
      parts.addAll(List.of("--many-leases", Integer.toString(manyLeases)));
    }
    if (costCurve) {
      parts.addAll(
          List.of(
              "--cost-curve",
              "--cost-curve-workers",
              costCurveWorkers,
              "--cost-curve-keys",
              costCurveKeys));
    }
    if (output != null) {
      parts.addAll(List.of("--output", output.toString()));
    }
    return String.join(" ", parts);
  }

  private static String seconds(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
  }
}
