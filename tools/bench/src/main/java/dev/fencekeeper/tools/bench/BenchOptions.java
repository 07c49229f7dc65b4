package dev.fencekeeper.tools.bench;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.tools.CliContext;
import dev.fencekeeper.tools.DurationConverter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** The options of {@code bench}, and their checks before anything starts. */
final class BenchOptions {
  /** --many-leases above this would take longer to acquire than any window is long. */
  static final int MAX_MANY_LEASES = 1_000_000;

  /**
   * Long enough for C2 on a 2-core box to settle under load (four to six minutes there); an upper
   * bound.
   */
  static final int DEFAULT_JIT_WARMUP_SECONDS = 600;

  static final String DEFAULT_JIT_WARMUP = DEFAULT_JIT_WARMUP_SECONDS + "s";

  @Option(
      names = "--endpoints",
      paramLabel = "HOST:PORT,...",
      description =
          "Measure this running cluster, named by its nodes' client ports, instead of starting one"
              + " (no failover figures then).")
  String endpoints;

  @Option(
      names = "--peers",
      paramLabel = "HOST:PORT,...",
      description = "Deprecated: the running cluster's Raft addresses; give --endpoints.")
  String peers;

  @Option(
      names = "--workload",
      paramLabel = "W1,W2,...",
      defaultValue = "W1,W2,W3,W4,W5,W6",
      description = "Workloads to run (default: all; `none` for none).")
  String workloads;

  @Option(
      names = "--concurrency",
      paramLabel = "N,N,...",
      defaultValue = "1,16,64",
      description = "Worker counts to sweep (default: ${DEFAULT-VALUE}).")
  String concurrency;

  /** --duration and --warmup: the window of each workload and concurrency, and the load before. */
  @Mixin MeasureWindow timing = new MeasureWindow();

  @Option(
      names = "--jit-warmup",
      paramLabel = "DURATION",
      defaultValue = DEFAULT_JIT_WARMUP,
      converter = DurationConverter.ZeroAllowed.class,
      description =
          "At most this long, unrecorded load of every chosen workload on a freshly started cluster"
              + " before the first one is measured, in rounds of 10 s until the node JVMs' JIT"
              + " compilers use under 2 %% of their CPU (default: ${DEFAULT-VALUE}; 0s skips it).")
  Duration jitWarmup;

  @Option(
      names = "--phases",
      paramLabel = "cold,settled",
      defaultValue = "settled",
      description =
          "When in the clusters' life to measure: `cold`, every system's cluster freshly started"
              + " and no JIT warm-up (its first window after --cold-warmup), as a user's first"
              + " benchmark sees it; `settled`, after --jit-warmup. `cold,settled` measures both,"
              + " cold first (default: ${DEFAULT-VALUE}).")
  String phases;

  @Option(
      names = "--cold-warmup",
      paramLabel = "DURATION",
      defaultValue = "15s",
      converter = DurationConverter.ZeroAllowed.class,
      description =
          "Cold phase: unmeasured load on each system's freshly started cluster before its first"
              + " window; its later windows take --warmup (default: ${DEFAULT-VALUE}).")
  Duration coldWarmup;

  @Option(
      names = "--rate",
      paramLabel = "N/s",
      description =
          "Fixed rate instead of a closed loop: every measured window runs N steps a second over"
              + " its workers, each worker on a fixed schedule, and times each step from when it"
              + " was due, so a slow step's delay to the ones behind it counts (no coordinated"
              + " omission). Throughput below N means the system fell behind (default: a closed"
              + " loop, each worker's next step as soon as its last one ends).")
  String rate;

  @Option(
      names = "--histogram-logs",
      paramLabel = "DIR",
      description =
          "Write each measured window's latencies there as an HdrHistogram log (one interval"
              + " histogram a second, microseconds), named phase-system-workload[-path]-cN.hlog.")
  Path histogramLogs;

  @Option(
      names = "--idle",
      paramLabel = "DURATION",
      defaultValue = "0s",
      converter = DurationConverter.ZeroAllowed.class,
      description =
          "Also measure each system's idle cluster: its three members' CPU over this long with no"
              + " load, every system side by side, before the first workload (default:"
              + " ${DEFAULT-VALUE}, skipped).")
  Duration idle;

  @Option(
      names = "--clients",
      paramLabel = "N",
      defaultValue = "1",
      description =
          "FencingClient instances the workers share round-robin (default: ${DEFAULT-VALUE}).")
  int clients;

  @Option(
      names = "--leases",
      paramLabel = "N",
      defaultValue = "1000",
      description = "W5: leases renewed at TTL/3 in total (default: ${DEFAULT-VALUE}).")
  int leases;

  @Option(
      names = "--failover-trials",
      paramLabel = "N",
      defaultValue = "3",
      description =
          "Leader kills and holder kills, each (default: ${DEFAULT-VALUE}; 0 skips them).")
  int failoverTrials;

  @Option(
      names = "--baseline",
      paramLabel = "ratis,zookeeper,etcd",
      description =
          "`ratis`: also run W2 and W4 against a bare-Ratis counter cluster, same settings;"
              + " `zookeeper`, `etcd`: also run the workloads against a three-member cluster of"
              + " that system (Debian packages `zookeeper`, `etcd-server`), ZooKeeper through the"
              + " shortest fenced-lock recipe (one multi a step); `zookeeper-curator`: ZooKeeper"
              + " through Curator's lock recipe, as `zookeeper` ran it before. Comma-separated.")
  String baseline;

  @Option(
      names = "--state-keys",
      paramLabel = "N",
      defaultValue = "0",
      description =
          "Also measure heap, snapshot and restart with N keys of 100 bytes, on a cluster of its"
              + " own (default: 0, skipped; the target is 1000000).")
  int stateKeys;

  @Option(
      names = "--snapshot-load",
      description =
          "Also measure W2 while snapshots are taken, against W2 without, each on a cluster of its"
              + " own loaded with --state-keys keys (1000000 if not given).")
  boolean snapshotLoad;

  @Option(
      names = "--snapshot-every",
      paramLabel = "ENTRIES",
      description =
          "--snapshot-load: snapshot.auto-trigger.entries of the cluster with snapshots (default:"
              + " the entries the window without snapshots applied in 4 s).")
  Long snapshotEvery;

  @Option(
      names = "--cost-curve",
      description =
          "Also measure the cost curve: W2 at each of --cost-curve-workers on the bench's cluster,"
              + " and heap, snapshot and restart at each of --cost-curve-keys, each on a cluster of"
              + " its own; drawn as a PNG next to --output (FILE's name with -cost-curve.png).")
  boolean costCurve;

  @Option(
      names = "--cost-curve-workers",
      paramLabel = "N,N,...",
      defaultValue = CostCurve.DEFAULT_WORKERS,
      description = "The cost curve's worker counts, ascending (default: ${DEFAULT-VALUE}).")
  String costCurveWorkers;

  @Option(
      names = "--cost-curve-keys",
      paramLabel = "N,N,...",
      defaultValue = CostCurve.DEFAULT_KEYS,
      description =
          "The cost curve's state sizes in keys of 100 bytes, ascending (default:"
              + " ${DEFAULT-VALUE}; 10,000,000 keys need about 3.5 GB of heap per node).")
  String costCurveKeys;

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
  String api;

  @Option(
      names = "--many-leases",
      paramLabel = "N",
      defaultValue = "0",
      description =
          "Also measure one client built with the defaults holding N leases of TTL 10 s (each"
              + " renewing itself) with W2 at the highest --concurrency on top: leases still valid,"
              + " log entries applied per second, node CPU, and W2's writes/s beside the leases"
              + " against W2 alone (default: 0, skipped).")
  int manyLeases;

  @Option(
      names = "--node-w2",
      description =
          "Also run W2 at 1 and 16 workers through the Java client's Lease API and through the"
              + " Node client (clients/node/bench/w2.mjs as a child `node` process; the client"
              + " must be built: npm ci && npm run build), alternating on the same cluster, and"
              + " report the Node/Java ratio.")
  boolean nodeW2;

  @Option(
      names = "--node-client",
      paramLabel = "DIR",
      description =
          "--node-w2: the Node client's directory (default: clients/node of the repository the"
              + " bench was built in).")
  Path nodeClient;

  @Option(
      names = "--output",
      paramLabel = "FILE",
      description = "Write the benchmarks document (e.g. docs/benchmarks.md) there as well.")
  Path output;

  @Option(names = "--json", description = "Print one JSON object instead of Markdown tables.")
  boolean json;

  /** The highest --rate: a step every microsecond, more than any system here answers. */
  static final double MAX_RATE = 1_000_000;

  /** --rate in steps a second, 0 when not given (a closed loop). */
  double ratePerSecond() {
    if (rate == null) {
      return 0;
    }
    String n = rate.strip();
    n = n.endsWith("/s") ? n.substring(0, n.length() - 2).strip() : n;
    try {
      double perSecond = Double.parseDouble(n);
      if (perSecond > 0 && perSecond <= MAX_RATE) {
        return perSecond;
      }
    } catch (NumberFormatException e) {
      // refused below
    }
    throw new ConfigException(
        "--rate: '"
            + rate
            + "' must be steps a second above 0 and at most "
            + (long) MAX_RATE
            + ", e.g. 500 or 500/s");
  }

  /** What the options ask for, checked and parsed. */
  record Plan(
      List<Workload> workloads,
      List<ClientApi> apis,
      Path nodeClientDir,
      String nodeVersion,
      List<Integer> concurrencies,
      List<Phase> phases,
      List<String> baselines,
      List<Integer> curveWorkers,
      List<Integer> curveKeys) {
    /** The highest --concurrency: the one the single-concurrency measurements take. */
    int maxConcurrency() {
      return concurrencies.stream().mapToInt(Integer::intValue).max().orElseThrow();
    }
  }

  /**
   * Checks every option and parses the lists, in the order a user meets the refusals; runs {@code
   * node --version} for --node-w2.
   *
   * @throws ConfigException one line naming the option
   */
  Plan plan(CliContext context) {
    SnapshotLoad.validate(snapshotLoad, snapshotEvery, runsOnACluster());
    List<Workload> chosen = parseWorkloads();
    List<ClientApi> apis = ClientApi.parse(api);
    ratePerSecond();
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
    List<Phase> phasesChosen = Phase.parse(phases);
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
        || jitWarmup.isNegative()
        || idle.isNegative()) {
      throw new ConfigException(
          "--clients and --leases must be ≥ 1, --failover-trials ≥ 0, --duration > 0,"
              + " --warmup, --cold-warmup, --jit-warmup and --idle ≥ 0");
    }
    if (costCurve && (runsOnACluster() || output == null)) {
      throw new ConfigException(
          "--cost-curve needs a cluster the bench starts (not --endpoints): its state sizes kill"
              + " and restart every node; and --output FILE: its chart is drawn next to the"
              + " document");
    }
    if (stateKeys < 0 || (stateKeys > 0 && runsOnACluster())) {
      throw new ConfigException(
          "--state-keys must be ≥ 0, and needs a cluster the bench starts (not --endpoints):"
              + " it kills and restarts every node");
    }
    return new Plan(
        chosen,
        apis,
        nodeClientDir,
        nodeVersion,
        concurrencies,
        phasesChosen,
        baselines,
        curveWorkers,
        curveKeys);
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

  /** Whether a running cluster was named (--endpoints, or the deprecated --peers). */
  private boolean runsOnACluster() {
    return endpoints != null || peers != null;
  }

  /** The running cluster --endpoints (or the deprecated --peers) names; empty if neither. */
  java.util.Optional<ClusterConfig> runningCluster(java.util.function.Consumer<String> warnings) {
    return dev.fencekeeper.tools.RunningCluster.of(endpoints, peers, warnings);
  }
}
