package dev.fencekeeper.tools.drill;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.tools.drill.check.Finding;
import dev.fencekeeper.tools.drill.history.Op;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The clock-skew drill's steps: the leader's wall clock jumps 30 s forward and then 60 s back while
 * a holder renews a lease whose TTL is far shorter than either step. The lease must survive both
 * (every renewal answered is RENEWED), and once the holder walks away with the leader's clock
 * stepped back, the lease must end within its TTL plus {@link #EXPIRY_SLACK}, not 30 s later.
 */
final class ClockSteps {
  static final long STEP_MS = 30_000;
  static final Duration TTL = Duration.ofSeconds(3);
  static final Duration RENEW_EVERY = Duration.ofMillis(500);

  /**
   * Expiry is ticked when the leader's clock reaches the deadline; the slack is room for a loaded
   * two-core machine.
   */
  static final Duration EXPIRY_SLACK = Duration.ofSeconds(3);

  private static final Duration GIVE_UP = Duration.ofSeconds(45);

  private ClockSteps() {}

  static void run(DrillContext ctx) throws InterruptedException {
    String resource = "drill-clock-step" + ctx.resourceSuffix;
    try (FencingClient client = FencingClient.connect(ctx.cluster.clientConfig(), "clock-holder");
        FencingClient other =
            FencingClient.connect(ctx.cluster.clientConfig(), "clock-contender")) {
      RecordedClient holder = new RecordedClient(client, ctx.recorder, "clock-holder");
      RecordedClient contender = new RecordedClient(other, ctx.recorder, "clock-contender");
      Op grant = acquireWithin(holder, resource, GIVE_UP);
      if (grant == null) {
        ctx.note("clock steps skipped: " + resource + " could not be acquired");
        return;
      }
      long token = grant.result().token();
      List<Op> renewals = new CopyOnWriteArrayList<>();
      AtomicBoolean renewing = new AtomicBoolean(true);
      Thread renewer =
          new Thread(
              () -> {
                while (renewing.get()) {
                  renewals.add(holder.renew(resource, token, TTL));
                  try {
                    Thread.sleep(RENEW_EVERY.toMillis());
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              },
              "clock-holder-renewer");
      renewer.start();
      String leader = ctx.leader();
      try {
        ctx.sleep(Duration.ofSeconds(1));
        ctx.fault(
            "wall clock of leader "
                + leader
                + " stepped +30 s (holder renews "
                + resource
                + ", TTL 3 s)");
        ctx.cluster.stepClock(leader, STEP_MS);
        ctx.sleep(Duration.ofSeconds(3));
        ctx.fault("wall clock of leader " + leader + " stepped -60 s");
        ctx.cluster.stepClock(leader, -STEP_MS);
        ctx.sleep(Duration.ofSeconds(3));
      } finally {
        renewing.set(false);
        renewer.join();
      }
      List<Op> lost = renewals.stream().filter(Op::failed).toList();
      if (!lost.isEmpty()) {
        ctx.violation(
            new Finding(
                Finding.Kind.LEASE_DEADLINE_MOVED_BY_CLOCK_STEP,
                "lease "
                    + token
                    + " on "
                    + resource
                    + " was lost while its holder renewed every "
                    + RENEW_EVERY.toMillis()
                    + " ms (TTL "
                    + TTL.toSeconds()
                    + " s) across wall-clock steps on leader "
                    + leader
                    + ": "
                    + lost.get(0).code(),
                lost,
                List.of()));
        ctx.cluster.stepClock(leader, 0);
        return; // the lease has ended already: there is no walk-away to time
      }
      // The holder walks away with the leader's clock still 30 s behind: the lease must run out on
      // time.
      Op last = renewals.stream().filter(Op::ok).reduce((a, b) -> b).orElse(grant);
      long bound = last.completeNanos() + TTL.toNanos() + EXPIRY_SLACK.toNanos();
      ctx.note(
          "holder of "
              + resource
              + " stopped renewing; its lease must end within "
              + (TTL.plus(EXPIRY_SLACK)).toSeconds()
              + " s of its last renewal");
      Op regrant = acquireWithin(contender, resource, GIVE_UP);
      if (regrant == null || regrant.completeNanos() > bound) {
        List<Op> ops = new ArrayList<>(List.of(last));
        if (regrant != null) {
          ops.add(regrant);
        }
        ctx.violation(
            new Finding(
                Finding.Kind.LEASE_DEADLINE_MOVED_BY_CLOCK_STEP,
                "lease "
                    + token
                    + " on "
                    + resource
                    + " (TTL "
                    + TTL.toSeconds()
                    + " s) was not re-granted within "
                    + TTL.plus(EXPIRY_SLACK).toSeconds()
                    + " s of its last renewal with leader "
                    + leader
                    + "'s wall clock stepped back 30 s: "
                    + (regrant == null
                        ? "not within " + GIVE_UP.toSeconds() + " s"
                        : String.format(
                            "after %.1f s",
                            (regrant.completeNanos() - last.completeNanos()) / 1e9)),
                ops,
                List.of()));
      } else {
        ctx.note(
            String.format(
                "re-granted %.1f s after the last renewal",
                (regrant.completeNanos() - last.completeNanos()) / 1e9));
        contender.release(resource, regrant.result().token());
      }
      ctx.cluster.stepClock(leader, 0);
      ctx.note("wall clock of " + leader + " set back to the system clock (a +30 s step)");
    }
  }

  /** Tries to acquire every 100 ms; the first grant, or null after {@code within}. */
  private static Op acquireWithin(RecordedClient client, String resource, Duration within)
      throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (System.nanoTime() < deadline) {
      Op op = client.acquire(resource, TTL);
      if (op.ok()) {
        return op;
      }
      Thread.sleep(100);
    }
    return null;
  }
}
