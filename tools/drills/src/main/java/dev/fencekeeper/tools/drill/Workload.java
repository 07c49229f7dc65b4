package dev.fencekeeper.tools.drill;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.tools.drill.history.HistoryRecorder;
import dev.fencekeeper.tools.drill.history.Op;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Client workers contending for a few resources: each acquires, writes a few unique values with its
 * token, sometimes renews and reads, then releases — or, now and then, walks away holding the
 * lease, as a crashed holder would, so the drill can time the re-grant. A worker that cannot get a
 * resource reads it instead.
 */
final class Workload implements AutoCloseable {
  static final List<String> RESOURCES = List.of("drill-r1", "drill-r2", "drill-r3");
  private final List<String> resources;
  static final List<String> KEYS = List.of("k1", "k2");
  static final Duration TTL = Duration.ofSeconds(3);
  private static final double ABANDON_PROBABILITY = 0.08;

  /** A lease its holder walked away from without releasing: the drill times its re-grant. */
  record Abandoned(String resource, long token, long atNanos) {}

  private final List<Thread> threads = new ArrayList<>();
  private final List<FencingClient> clients = new ArrayList<>();
  private final List<Abandoned> abandoned = new CopyOnWriteArrayList<>();
  private volatile boolean stopping;

  /**
   * {@code suffix} keeps the resources of this run apart from earlier runs' on a shared cluster.
   */
  Workload(ClusterConfig config, HistoryRecorder recorder, int workers, long seed, String suffix) {
    this.resources = RESOURCES.stream().map(r -> r + suffix).toList();
    for (int i = 1; i <= workers; i++) {
      FencingClient client = FencingClient.connect(config, "w" + i);
      clients.add(client);
      RecordedClient recorded = new RecordedClient(client, recorder, "w" + i);
      Random random = new Random(seed * 1_000_003L + i);
      Thread t = new Thread(() -> run(recorded, random), "drill-worker-w" + i);
      t.setDaemon(true);
      threads.add(t);
    }
  }

  void start() {
    threads.forEach(Thread::start);
  }

  List<Abandoned> abandoned() {
    return List.copyOf(abandoned);
  }

  private void run(RecordedClient c, Random random) {
    int written = 0;
    while (!stopping) {
      String resource = resources.get(random.nextInt(resources.size()));
      Op acquire = c.acquire(resource, TTL);
      if (!acquire.ok()) {
        if (!stopping) {
          c.read(resource, KEYS.get(random.nextInt(KEYS.size())));
        }
        pause(acquire.possiblyApplied() ? 300 : 50 + random.nextInt(100));
        continue;
      }
      long token = acquire.result().token();
      boolean holding = true;
      int writes = 1 + random.nextInt(4);
      for (int i = 0; i < writes && holding && !stopping; i++) {
        String key = KEYS.get(random.nextInt(KEYS.size()));
        Op write = c.write(resource, key, token, c.process() + "-" + (++written));
        holding = write.ok();
        if (holding && random.nextInt(3) == 0) {
          holding = c.renew(resource, token, TTL).ok();
        }
        if (random.nextInt(3) == 0) {
          c.read(resource, KEYS.get(random.nextInt(KEYS.size())));
        }
        pause(20 + random.nextInt(60));
      }
      if (holding && random.nextDouble() < ABANDON_PROBABILITY) {
        abandoned.add(new Abandoned(resource, token, System.nanoTime()));
        continue;
      }
      c.release(resource, token);
    }
  }

  private void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stopping = true;
    }
  }

  /** Stops the workers after their current operation; one stuck in a timeout finishes it first. */
  void stop() throws InterruptedException {
    stopping = true;
    for (Thread t : threads) {
      t.join(30_000);
    }
  }

  @Override
  public void close() {
    stopping = true;
    clients.forEach(FencingClient::close);
  }
}
