package dev.fencekeeper.tools.drill;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.tools.FencekeeperCli;
import dev.fencekeeper.tools.drill.check.Finding;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

/**
 * Two holders that renew a lease of {@link #TTL} through leader kills, as users run them: a {@code
 * fencekeeper lease hold} process, and a {@link Lease} on a {@link FencingClient} of its own in the
 * drill's JVM (both renew through the client's one session). Neither may ever lose its lease: the
 * cluster stays available across a kill, so a lost lease is a violation. For the in-JVM lease the
 * time from each kill to the first renewal the new leader answered is measured: the lease's local
 * deadline moves only on a keep-alive answered RENEWED, to the keep-alive's send time plus the TTL,
 * so the first deadline that starts after the kill marks that renewal.
 */
final class RenewingHolders implements AutoCloseable {
  static final Duration TTL = Duration.ofSeconds(3);
  static final String JAVA_RESOURCE = "drill-renewing-holder-java";
  static final String CLI_RESOURCE = "drill-renewing-holder-cli";
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
  private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  /** A moment the lease's local deadline was seen to move later: a renewal was answered. */
  private record Renewal(long seenNanos, long deadlineNanos) {}

  private record Kill(String leader, long atNanos) {}

  private final DrillContext ctx;
  private final String javaResource;
  private final String cliResource;
  private final FencingClient client;
  private final Lease lease;
  private final Process cli;
  private final Path cliLog;
  private final Thread watcher;
  private final List<Renewal> renewals = new CopyOnWriteArrayList<>();
  private final List<Kill> kills = new CopyOnWriteArrayList<>();
  private volatile String javaLoss;
  private volatile String cliLoss;
  private volatile boolean closing;

  private RenewingHolders(DrillContext ctx) {
    this.ctx = ctx;
    this.javaResource = JAVA_RESOURCE + ctx.resourceSuffix;
    this.cliResource = CLI_RESOURCE + ctx.resourceSuffix;
    String endpoints =
        ctx.cluster.clientConfig().clientAddresses().stream()
            .map(PeerAddress::address)
            .collect(Collectors.joining(","));
    this.cliLog = ctx.cluster.root().resolve("renewing-holder-cli.log");
    this.cli = startCli(endpoints, cliResource);
    Thread errors = new Thread(this::copyCliErrors, "drill-renewing-holder-cli-stderr");
    errors.setDaemon(true);
    errors.start();
    // A user's client: the default request timeout, not the workload's short one.
    this.client = FencingClient.connect(ClusterConfig.forEndpoints(endpoints), "renewing-holder");
    this.lease = acquire(client, javaResource);
    lease.onLost(reason -> javaLoss = reason + " at " + ctx.at(System.nanoTime()));
    this.watcher = new Thread(this::watch, "drill-renewing-holder-watch");
    watcher.setDaemon(true);
    watcher.start();
  }

  /** Takes both leases; returns once both holders hold. */
  static RenewingHolders start(DrillContext ctx) {
    RenewingHolders holders = new RenewingHolders(ctx);
    ctx.note(
        "holders renewing "
            + holders.javaResource
            + " (a Lease in this JVM) and "
            + holders.cliResource
            + " (a `lease hold` process), TTL "
            + TTL.toSeconds()
            + " s");
    return holders;
  }

  private static Lease acquire(FencingClient client, String resource) {
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (true) {
      try {
        return client.acquire(resource, TTL, Duration.ofSeconds(10));
      } catch (RuntimeException e) {
        if (System.nanoTime() > deadline) {
          throw new DrillException("the renewing holder could not take " + resource + ": " + e);
        }
      }
    }
  }

  private static Process startCli(String endpoints, String resource) {
    List<String> command = new ArrayList<>();
    command.add(DrillCluster.javaBinary());
    command.addAll(List.of("-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
    // Whoever debugs the drill with their own logging configuration gets the holder's log too.
    String logging = System.getProperty("logback.configurationFile");
    if (logging != null) {
      command.add("-Dlogback.configurationFile=" + logging);
    }
    command.addAll(
        List.of(
            "-cp",
            System.getProperty("java.class.path"),
            FencekeeperCli.class.getName(),
            "lease",
            "hold",
            "--endpoints",
            endpoints,
            resource,
            "--ttl",
            TTL.toSeconds() + "s",
            "--wait",
            "10s"));
    Process p;
    try {
      p = new ProcessBuilder(command).start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start the `lease hold` process", e);
    }
    BufferedReader out =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    CompletableFuture<String> line =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return out.readLine();
              } catch (IOException e) {
                return null;
              }
            });
    try {
      String first = line.get(START_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
      if (first == null || !first.startsWith("HOLDING")) {
        p.destroyForcibly();
        throw new DrillException("`lease hold " + resource + "` did not hold it: " + first);
      }
    } catch (ExecutionException | TimeoutException e) {
      p.destroyForcibly();
      throw new DrillException("`lease hold " + resource + "` did not hold it in time: " + e);
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new DrillException("interrupted while starting `lease hold`");
    }
    return p;
  }

  /**
   * Copies the holder's stderr to its log file, and notes when it says it lost its lease: the
   * moment, against the kills, is what tells a failover's loss from one of a starved process.
   */
  private void copyCliErrors() {
    try (BufferedReader err =
            new BufferedReader(
                new InputStreamReader(cli.getErrorStream(), StandardCharsets.UTF_8));
        java.io.Writer out = Files.newBufferedWriter(cliLog, StandardCharsets.UTF_8)) {
      for (String line = err.readLine(); line != null; line = err.readLine()) {
        out.write(line + System.lineSeparator());
        out.flush();
        if (line.startsWith("LOST ")) {
          cliLoss = line + " at " + ctx.at(System.nanoTime());
        }
      }
    } catch (IOException e) {
      // The process ended.
    }
  }

  /** Records every move of the in-JVM lease's local deadline. */
  private void watch() {
    long last = Long.MIN_VALUE;
    while (!closing) {
      long now = System.nanoTime();
      Duration remaining = lease.remaining();
      if (remaining.isZero()) {
        return; // lost or closed: no deadline moves any more
      }
      long deadline = now + remaining.toNanos();
      // Reading the remaining time and the clock apart costs microseconds; a renewal moves the
      // deadline by about the renewal period.
      if (last == Long.MIN_VALUE || deadline - last > TimeUnit.MILLISECONDS.toNanos(50)) {
        if (last != Long.MIN_VALUE) {
          renewals.add(new Renewal(now, deadline));
        }
        last = deadline;
      }
      java.util.concurrent.locks.LockSupport.parkNanos(POLL_NANOS);
    }
  }

  /** The leader {@code leader} was killed at {@code atNanos}. */
  void killed(String leader, long atNanos) {
    kills.add(new Kill(leader, atNanos));
  }

  /**
   * Milliseconds from the kill at {@code killNanos} to the first renewal answered of a keep-alive
   * sent after it, seen before {@code untilNanos}; -1 if none.
   */
  private long renewalAfter(long killNanos, long untilNanos) {
    for (Renewal r : renewals) {
      // The deadline is the keep-alive's send time plus the TTL (less a margin of 1,000 ppm, 3 ms
      // here): 10 ms of slack keeps a keep-alive sent at the kill's instant on the right side.
      boolean sentAfterKill = r.deadlineNanos() - TTL.toNanos() >= killNanos - 10_000_000L;
      if (r.seenNanos() > killNanos && r.seenNanos() < untilNanos && sentAfterKill) {
        return (r.seenNanos() - killNanos) / 1_000_000;
      }
    }
    return -1;
  }

  /**
   * Notes each kill's renewal time and reports, as violations, a holder that lost its lease; stops
   * both holders.
   */
  void finish() {
    for (int i = 0; i < kills.size(); i++) {
      Kill kill = kills.get(i);
      long until = i + 1 < kills.size() ? kills.get(i + 1).atNanos() : Long.MAX_VALUE;
      long ms = renewalAfter(kill.atNanos(), until);
      ctx.renewals.add(
          new DrillResult.Window("kill -9 leader " + kill.leader(), kill.atNanos(), ms));
    }
    String exited = cli.isAlive() ? null : "exited " + cli.exitValue();
    close();
    if (javaLoss != null) {
      ctx.violation(lost("the Lease on " + javaResource + " was lost: " + javaLoss));
    }
    if (cliLoss != null || exited != null) {
      ctx.violation(
          lost("`lease hold " + cliResource + "`: " + (cliLoss != null ? cliLoss : exited)));
    }
  }

  private Finding lost(String what) {
    return new Finding(
        Finding.Kind.RENEWING_HOLDER_LOST_LEASE,
        what
            + " (TTL "
            + TTL.toSeconds()
            + " s, renewed by the client's session through "
            + kills.size()
            + " leader kill(s))",
        List.of(),
        List.of());
  }

  @Override
  public void close() {
    if (closing) {
      return;
    }
    closing = true;
    cli.destroy(); // SIGTERM: `lease hold` releases its lease
    try {
      if (!cli.waitFor(10, TimeUnit.SECONDS)) {
        cli.destroyForcibly();
      }
    } catch (InterruptedException e) {
      cli.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    try {
      lease.close();
    } catch (RuntimeException e) {
      // The lease expires anyway.
    }
    client.close();
  }
}
