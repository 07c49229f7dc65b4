package dev.fencekeeper.tools.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.tools.Json;
import dev.fencekeeper.tools.bench.Runner.Measurement;
import dev.fencekeeper.tools.bench.Workload.Worker;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.LongAdder;

/**
 * {@code --many-leases N}: one client built with the defaults holds N self-renewing leases (TTL
 * {@link Workload#LEASE_TTL}) at once, as an application with many resources would, and W2 runs on
 * top of them through the same client. Measured on the bench's cluster: W2 alone, then the leases
 * alone, then W2 beside the leases, each window with the log entries the cluster applied and the
 * nodes' CPU; after each leases window, how many leases are still valid.
 */
final class ManyLeases {
  /** Acquires in flight at once while taking the leases. */
  private static final int ACQUIRES_IN_FLIGHT = 256;

  /** How often each lease renews itself: a third of its TTL, as {@code Lease} does. */
  private static final Duration RENEWAL_PERIOD = Workload.LEASE_TTL.dividedBy(3);

  private ManyLeases() {}

  /** A window without W2: what renewing the leases alone costs. */
  record Idle(double seconds, long appliedEntries, long serverCpuMs, long clientCpuMs) {
    double appliedPerSecond() {
      return appliedEntries < 0 ? Double.NaN : appliedEntries / seconds;
    }
  }

  /** How many of the leases the client still holds, as the leases themselves say. */
  record Standing(int valid, int held, int atRisk, int lost) {}

  record Figures(
      int leases,
      Duration ttl,
      int acquired,
      double acquireSeconds,
      Map<String, Long> acquireFailures,
      Measurement w2Alone,
      Idle leasesAlone,
      Standing afterLeasesAlone,
      Measurement w2WithLeases,
      Standing atEnd,
      Map<String, Long> lossReasons) {

    /** W2's writes/s beside the leases over W2's alone, or NaN when W2 alone did nothing. */
    double w2Ratio() {
      return w2Alone.opsPerSecond() == 0
          ? Double.NaN
          : w2WithLeases.opsPerSecond() / w2Alone.opsPerSecond();
    }
  }

  static Figures measure(
      ClusterConfig config,
      Runner.Probe probe,
      int leases,
      int workers,
      Duration warmup,
      Duration duration,
      String runId,
      PrintStream progress)
      throws InterruptedException {
    try (FencingClient client = FencingClient.builder().config(config).build()) {
      progress.printf("bench: many leases: W2 x%d alone%n", workers);
      progress.flush();
      Measurement alone =
          Runner.run(
                  BenchReport.FENCEKEEPER,
                  Workload.W2,
                  workers,
                  1,
                  () -> w2Workers(client, runId + "-alone", workers),
                  warmup,
                  duration,
                  probe)
              .withApi(ClientApi.LEASE);
      progress.printf(
          Locale.ROOT,
          "bench: many leases: W2 alone %.0f writes/s, %.0f entries/s applied%n",
          alone.opsPerSecond(),
          alone.appliedPerSecond());
      progress.printf(
          "bench: many leases: acquiring %,d leases of TTL %d s through one client%n",
          leases, Workload.LEASE_TTL.toSeconds());
      progress.flush();
      List<Lease> held = new ArrayList<>(leases);
      Map<String, LongAdder> acquireFailures = new ConcurrentHashMap<>();
      Map<String, LongAdder> lossReasons = new ConcurrentHashMap<>();
      long start = System.nanoTime();
      acquireAll(client, runId, leases, held, acquireFailures, lossReasons);
      double acquireSeconds = (System.nanoTime() - start) / 1e9;
      progress.printf(
          Locale.ROOT,
          "bench: many leases: %,d of %,d acquired in %.1f s%n",
          held.size(),
          leases,
          acquireSeconds);
      progress.flush();
      try {
        // At least one renewal period first: the window then sees the leases renewing, not only
        // the quiet after their grants.
        Duration settle = warmup.compareTo(RENEWAL_PERIOD) > 0 ? warmup : RENEWAL_PERIOD;
        Runner.sleepUntil(System.nanoTime() + settle.toNanos());
        Idle idle = idle(probe, duration);
        Standing afterIdle = standing(held);
        progress.printf(
            Locale.ROOT,
            "bench: many leases: leases alone %.0f entries/s applied, %d of %d valid%n",
            idle.appliedPerSecond(),
            afterIdle.valid(),
            held.size());
        progress.flush();
        Measurement beside =
            Runner.run(
                    BenchReport.FENCEKEEPER,
                    Workload.W2,
                    workers,
                    1,
                    () -> w2Workers(client, runId + "-beside", workers),
                    warmup,
                    duration,
                    probe)
                .withApi(ClientApi.LEASE);
        Standing atEnd = standing(held);
        progress.printf(
            Locale.ROOT,
            "bench: many leases: W2 beside them %.0f writes/s, %.0f entries/s applied, %d of %d"
                + " leases valid%n",
            beside.opsPerSecond(),
            beside.appliedPerSecond(),
            atEnd.valid(),
            held.size());
        progress.flush();
        return new Figures(
            leases,
            Workload.LEASE_TTL,
            held.size(),
            acquireSeconds,
            counts(acquireFailures),
            alone,
            idle,
            afterIdle,
            beside,
            atEnd,
            counts(lossReasons));
      } finally {
        closeAll(held);
      }
    }
  }

  private static List<Worker> w2Workers(FencingClient client, String runId, int workers) {
    List<Worker> list = new ArrayList<>();
    for (int i = 0; i < workers; i++) {
      list.add(Workload.W2.worker(client, runId, i, workers, 1, Duration.ZERO, ClientApi.LEASE));
    }
    return list;
  }

  private static void acquireAll(
      FencingClient client,
      String runId,
      int leases,
      List<Lease> held,
      Map<String, LongAdder> failures,
      Map<String, LongAdder> lossReasons)
      throws InterruptedException {
    Semaphore inFlight = new Semaphore(ACQUIRES_IN_FLIGHT);
    List<CompletableFuture<?>> pending = new ArrayList<>();
    for (int i = 0; i < leases; i++) {
      inFlight.acquire();
      pending.add(
          client
              .acquireAsync("bench/" + runId + "/many/" + i, Workload.LEASE_TTL)
              .whenComplete(
                  (lease, error) -> {
                    inFlight.release();
                    if (error != null) {
                      Throwable cause =
                          error instanceof java.util.concurrent.CompletionException
                                  && error.getCause() != null
                              ? error.getCause()
                              : error;
                      failures
                          .computeIfAbsent(cause.getClass().getSimpleName(), k -> new LongAdder())
                          .increment();
                      return;
                    }
                    lease.onLost(
                        reason ->
                            lossReasons
                                .computeIfAbsent(reason.name(), k -> new LongAdder())
                                .increment());
                    synchronized (held) {
                      held.add(lease);
                    }
                  }));
    }
    for (CompletableFuture<?> f : pending) {
      try {
        f.join();
      } catch (RuntimeException e) {
        // counted among the failures above
      }
    }
  }

  private static Idle idle(Runner.Probe probe, Duration duration) {
    List<Long> pids = probe.serverPids();
    long client0 = CpuMeter.self();
    long servers0 = CpuMeter.cpuMillis(pids);
    long applied0 = probe.appliedIndex();
    long start = System.nanoTime();
    Runner.sleepUntil(start + duration.toNanos());
    long client1 = CpuMeter.self();
    long servers1 = CpuMeter.cpuMillis(pids);
    long applied1 = probe.appliedIndex();
    return new Idle(
        duration.toNanos() / 1e9,
        applied0 < 0 || applied1 < 0 ? -1 : applied1 - applied0,
        servers0 < 0 || servers1 < 0 || pids.isEmpty() ? -1 : servers1 - servers0,
        client0 < 0 || client1 < 0 ? -1 : client1 - client0);
  }

  static Standing standing(List<Lease> leases) {
    int valid = 0;
    int held = 0;
    int atRisk = 0;
    int lost = 0;
    for (Lease lease : leases) {
      if (lease.isValid()) {
        valid++;
      }
      switch (lease.state()) {
        case HELD -> held++;
        case AT_RISK -> atRisk++;
        case LOST -> lost++;
        case CLOSED -> {}
      }
    }
    return new Standing(valid, held, atRisk, lost);
  }

  private static void closeAll(List<Lease> leases) {
    Semaphore inFlight = new Semaphore(ACQUIRES_IN_FLIGHT);
    List<CompletableFuture<Void>> closing = new ArrayList<>();
    for (Lease lease : leases) {
      inFlight.acquireUninterruptibly();
      closing.add(lease.closeAsync().whenComplete((v, e) -> inFlight.release()));
    }
    closing.forEach(CompletableFuture::join);
  }

  private static Map<String, Long> counts(Map<String, LongAdder> adders) {
    Map<String, Long> out = new TreeMap<>();
    adders.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }

  static ObjectNode toJson(Figures f) {
    ObjectNode o = Json.object();
    o.put("leases", f.leases());
    o.put("ttl_s", f.ttl().toSeconds());
    o.put("acquired", f.acquired());
    o.put("acquire_seconds", BenchReport.round(f.acquireSeconds(), 2));
    ObjectNode acquireFailures = o.putObject("acquire_failures");
    f.acquireFailures().forEach(acquireFailures::put);
    o.set("w2_alone", w2Json(f.w2Alone()));
    ObjectNode idle = o.putObject("leases_alone");
    idle.put("seconds", BenchReport.round(f.leasesAlone().seconds(), 3));
    idle.put("applied_entries", f.leasesAlone().appliedEntries());
    idle.put("applied_entries_per_sec", BenchReport.round(f.leasesAlone().appliedPerSecond(), 1));
    idle.put("server_cpu_ms", f.leasesAlone().serverCpuMs());
    idle.put("client_cpu_ms", f.leasesAlone().clientCpuMs());
    standingJson(idle.putObject("leases_after"), f.afterLeasesAlone());
    ObjectNode beside = w2Json(f.w2WithLeases());
    standingJson(beside.putObject("leases_after"), f.atEnd());
    o.set("w2_with_leases", beside);
    o.put("w2_with_leases_per_alone", BenchReport.round(f.w2Ratio(), 3));
    ObjectNode losses = o.putObject("loss_reasons");
    f.lossReasons().forEach(losses::put);
    return o;
  }

  private static ObjectNode w2Json(Measurement m) {
    ObjectNode o = Json.object();
    o.put("workers", m.concurrency());
    o.put("ops_per_sec", BenchReport.round(m.opsPerSecond(), 1));
    o.put("p50_ms", BenchReport.round(m.percentileMs(50), 3));
    o.put("p99_ms", BenchReport.round(m.percentileMs(99), 3));
    o.put("failed", m.failed());
    o.put("applied_entries", m.appliedEntries());
    o.put("applied_entries_per_sec", BenchReport.round(m.appliedPerSecond(), 1));
    o.put("server_cpu_ms", m.serverCpuMs());
    o.put("client_cpu_ms", m.clientCpuMs());
    return o;
  }

  private static void standingJson(ObjectNode o, Standing s) {
    o.put("valid", s.valid());
    o.put("held", s.held());
    o.put("at_risk", s.atRisk());
    o.put("lost", s.lost());
  }

  /** The figures of the Markdown section, as its template (many-leases.md.mustache) shows them. */
  static Map<String, Object> markdown(Figures f) {
    Measurement a = f.w2Alone();
    Idle idle = f.leasesAlone();
    Measurement b = f.w2WithLeases();
    Map<String, Object> leasesAlone =
        ReportTemplate.model(
            "appliedPerSecond", BenchReport.fmt(idle.appliedPerSecond(), 0),
            "serverCores", cores(idle.serverCpuMs(), idle.seconds()),
            "clientCores", cores(idle.clientCpuMs(), idle.seconds()));
    leasesAlone.putAll(standing(f.afterLeasesAlone()));
    Map<String, Object> w2WithLeases = w2Window(b);
    w2WithLeases.putAll(standing(f.atEnd()));
    return ReportTemplate.model(
        "leases", BenchReport.fmt(f.leases(), 0),
        "ttlSeconds", f.ttl().toSeconds(),
        "inFlight", ACQUIRES_IN_FLIGHT,
        "acquired", BenchReport.fmt(f.acquired(), 0),
        "acquireSeconds", BenchReport.fmt(f.acquireSeconds(), 1),
        "acquireFailures", f.acquireFailures().isEmpty() ? null : f.acquireFailures().toString(),
        "w2Workers", a.concurrency(),
        "w2Alone", w2Window(a),
        "leasesAlone", leasesAlone,
        "w2WithLeases", w2WithLeases,
        "w2Percent", BenchReport.fmt(100 * f.w2Ratio(), 0),
        "lossReasons", f.lossReasons().isEmpty() ? null : f.lossReasons().toString());
  }

  private static Map<String, Object> w2Window(Measurement m) {
    return ReportTemplate.model(
        "writesPerSecond", BenchReport.fmt(m.opsPerSecond(), 0),
        "p99", BenchReport.fmt(m.percentileMs(99), 2),
        "failed", m.failed(),
        "appliedPerSecond", BenchReport.fmt(m.appliedPerSecond(), 0),
        "serverCores", cores(m.serverCpuMs(), m.seconds()),
        "clientCores", cores(m.clientCpuMs(), m.seconds()));
  }

  private static Map<String, Object> standing(Standing s) {
    return ReportTemplate.model(
        "valid", BenchReport.fmt(s.valid(), 0),
        "atRisk", BenchReport.fmt(s.atRisk(), 0),
        "lost", BenchReport.fmt(s.lost(), 0));
  }

  private static String cores(long cpuMs, double seconds) {
    return cpuMs < 0 ? "?" : BenchReport.fmt(cpuMs / 1000.0 / seconds, 2);
  }
}
