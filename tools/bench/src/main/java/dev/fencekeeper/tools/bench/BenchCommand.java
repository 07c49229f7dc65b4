package dev.fencekeeper.tools.bench;

import dev.fencekeeper.tools.CliContext;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code bench}: throughput, latency, CPU and failover figures, and the generator of
 * docs/benchmarks.md.
 */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    header = "Measure throughput, latency, CPU and failover; regenerate docs/benchmarks.md.",
    description = {
      "Starts a three-node cluster of separate processes under a temp dir (or uses --endpoints) and"
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

  @Mixin private BenchOptions options = new BenchOptions();

  BenchCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() throws Exception {
    return new BenchRun(context, options).run();
  }
}
