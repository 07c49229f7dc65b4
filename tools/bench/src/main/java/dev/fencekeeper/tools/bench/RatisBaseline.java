package dev.fencekeeper.tools.bench;

import dev.fencekeeper.tools.bench.Runner.Measurement;
import dev.fencekeeper.tools.bench.Workload.Worker;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.ratis.client.RaftClient;

/**
 * The bare-Ratis counter cluster, started next to fencekeeper's so that each baseline measurement
 * runs right after the fencekeeper measurement it is compared with: the machine's other load
 * changes less in seconds than over a whole run.
 */
final class RatisBaseline implements AutoCloseable {
  private final BenchCluster counter;
  private final List<RaftClient> raft = new ArrayList<>();
  private final Runner.Probe probe;

  private final int clients;
  private final Duration window;
  private final JitWarmup jitWarmup;

  /**
   * @param clients --clients: Ratis clients the workers share
   * @param window --duration
   * @param jitWarmup the warm-up the counter cluster takes before the settled phase
   */
  RatisBaseline(int clients, Duration window, JitWarmup jitWarmup)
      throws IOException, InterruptedException {
    this.clients = clients;
    this.window = window;
    this.jitWarmup = jitWarmup;
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
    jitWarmup.run(
        progress,
        null,
        round -> {
          List<Worker> workers = new ArrayList<>();
          for (int i = 0; i < JitWarmup.WORKERS; i++) {
            workers.add(
                Baseline.worker(i % 2 == 0 ? Workload.W2 : Workload.W4, raft.get(i % clients)));
          }
          return workers;
        },
        probe);
  }

  Measurement measure(Workload w, int c, Duration warmupBefore, Runner.Pacing pacing)
      throws InterruptedException {
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
        window,
        probe,
        pacing);
  }

  @Override
  public void close() {
    raft.forEach(Baseline::close);
    counter.close();
  }
}
