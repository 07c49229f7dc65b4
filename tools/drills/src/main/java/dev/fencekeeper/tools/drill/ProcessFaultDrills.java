package dev.fencekeeper.tools.drill;

import dev.fencekeeper.client.FencingAdmin;
import dev.fencekeeper.client.FencingException;
import dev.fencekeeper.config.PeerAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The drills whose faults are done to node processes: kill -9, SIGSTOP, restarts, skew, membership.
 */
final class ProcessFaultDrills {
  private ProcessFaultDrills() {}

  static final class LeaderKill implements Drill {
    private static final Duration CATCH_UP_TIMEOUT = Duration.ofSeconds(60);

    @Override
    public String name() {
      return "leader-kill";
    }

    @Override
    public String summary() {
      return "kill -9 the leader repeatedly during the workload, restarting it each time; two"
          + " holders renewing a 3 s lease must keep it through every kill";
    }

    @Override
    public void inject(DrillContext ctx) throws Exception {
      try (RenewingHolders holders = RenewingHolders.start(ctx)) {
        ctx.sleep(Duration.ofSeconds(2));
        while (ctx.roomFor(Duration.ofSeconds(5))) {
          String leader = ctx.leader();
          long killedAt = System.nanoTime();
          ctx.cluster.kill(leader);
          ctx.fault("kill -9 leader " + leader);
          holders.killed(leader, killedAt);
          ctx.sleepBetween(1_500, 2_500);
          ctx.cluster.start(leader);
          ctx.note("restarted " + leader + " from its data");
          // The next kill must leave a majority: one while the restarted node is still starting
          // would take two of three nodes away, an outage rather than a failover.
          ctx.cluster.awaitCaughtUp(leader, CATCH_UP_TIMEOUT);
          ctx.note(leader + " caught up");
          // At least one renewal period of the holders (a second) under a full cluster.
          ctx.sleepBetween(1_000, 2_000);
        }
        ctx.untilDeadline();
        holders.finish();
      }
    }
  }

  static final class LeaderPause implements Drill {
    @Override
    public String name() {
      return "leader-pause";
    }

    @Override
    public String summary() {
      return "SIGSTOP the leader past the election timeout (and past the leases' TTL), then SIGCONT"
          + " it";
    }

    @Override
    public void inject(DrillContext ctx) throws Exception {
      ctx.sleep(Duration.ofSeconds(2));
      while (ctx.roomFor(Duration.ofSeconds(7))) {
        String leader = ctx.leader();
        ctx.cluster.pause(leader);
        ctx.fault("SIGSTOP leader " + leader);
        ctx.sleepBetween(2_500, 4_000);
        ctx.cluster.resume(leader);
        ctx.note("SIGCONT " + leader + " (it wakes up believing it leads)");
        ctx.sleepBetween(2_500, 4_000);
      }
      ctx.untilDeadline();
    }
  }

  static final class RestartAll implements Drill {
    @Override
    public String name() {
      return "restart-all";
    }

    @Override
    public String summary() {
      return "kill -9 every node at once, then restart them all from disk";
    }

    @Override
    public void inject(DrillContext ctx) throws Exception {
      ctx.sleep(Duration.ofSeconds(3));
      while (ctx.roomFor(Duration.ofSeconds(8))) {
        for (DrillCluster.Node node : ctx.cluster.nodes()) {
          ctx.cluster.kill(node.id());
        }
        ctx.fault("kill -9 every node");
        ctx.sleepBetween(500, 1_500);
        for (DrillCluster.Node node : ctx.cluster.nodes()) {
          ctx.cluster.start(node.id());
        }
        ctx.note("restarted every node from its data; leader " + ctx.leader());
        ctx.sleepBetween(3_000, 5_000);
      }
      ctx.untilDeadline();
    }
  }

  /**
   * An upgrade done one node at a time: each node in turn gets SIGTERM (the followers first, the
   * leader last, as docs/operations.md tells operators), is started again from its data, and must
   * catch up before the next one stops. The cluster keeps a majority throughout, so the workload
   * should barely notice.
   */
  static final class RollingRestart implements Drill {
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration CATCH_UP_TIMEOUT = Duration.ofSeconds(60);

    @Override
    public String name() {
      return "rolling-restart";
    }

    @Override
    public String summary() {
      return "SIGTERM and restart each node in turn (followers first, the leader last), waiting for"
          + " it to catch up";
    }

    @Override
    public void inject(DrillContext ctx) throws Exception {
      ctx.sleep(Duration.ofSeconds(2));
      do {
        String leader = ctx.leader();
        List<String> order = new ArrayList<>();
        for (DrillCluster.Node node : ctx.cluster.nodes()) {
          if (!node.id().equals(leader)) {
            order.add(node.id());
          }
        }
        order.add(leader);
        for (String id : order) {
          ctx.cluster.stop(id, STOP_TIMEOUT);
          ctx.fault("SIGTERM " + id + (id.equals(leader) ? " (the leader)" : ""));
          ctx.sleepBetween(300, 1_000);
          ctx.cluster.start(id);
          ctx.cluster.awaitCaughtUp(id, CATCH_UP_TIMEOUT);
          ctx.note("restarted " + id + " and it caught up; leader " + ctx.leader());
          ctx.sleepBetween(1_000, 2_000);
        }
      } while (ctx.roomFor(Duration.ofSeconds(20)));
      ctx.untilDeadline();
    }
  }

  /**
   * First the leader's wall clock is stepped while a holder renews ({@link ClockSteps}: the lease
   * must survive and still end on time); then n2's leader clock runs 5 s ahead and n3's 5 s behind
   * and leadership moves between them (and n1). Clocks may change when leases end, never whether a
   * stale write gets in.
   */
  static final class ClockSkew implements Drill {
    static final long SKEW_MS = 5_000;

    @Override
    public String name() {
      return "clock-skew";
    }

    @Override
    public String summary() {
      return "one node's clock 5 s ahead, another's 5 s behind; leadership moved between them; the"
          + " leader's clock stepped +30 s and -60 s while a holder renews";
    }

    @Override
    public List<PeerAddress> members(DrillCluster cluster, List<PeerAddress> peers) {
      cluster.enableClockSteps();
      long[] offsets = {0, SKEW_MS, -SKEW_MS};
      List<PeerAddress> three = peers.subList(0, 3);
      for (int i = 0; i < three.size(); i++) {
        cluster.define(three.get(i), three, null, offsets[i]);
      }
      return three;
    }

    @Override
    public void inject(DrillContext ctx) throws Exception {
      List<DrillCluster.Node> nodes = ctx.cluster.nodes();
      try (FencingAdmin admin = FencingAdmin.connect(ctx.cluster.adminConfig())) {
        ctx.sleep(Duration.ofSeconds(2));
        ClockSteps.run(ctx);
        // Back and forth between the fast and the slow clock (n2, n3), starting with whichever does
        // not lead.
        int next = ctx.leader().equals(nodes.get(1).id()) ? 2 : 1;
        while (ctx.roomFor(Duration.ofSeconds(4))) {
          DrillCluster.Node to = nodes.get(next);
          ctx.fault(
              "leadership to "
                  + to.id()
                  + " (clock "
                  + (to.clockOffsetMs() >= 0 ? "+" : "")
                  + to.clockOffsetMs() / 1000
                  + " s)");
          try {
            String leader = admin.transferLeadership(to.id());
            ctx.note("leader is now " + leader);
          } catch (RuntimeException e) {
            ctx.note("transfer to " + to.id() + " did not complete: " + e.getMessage());
          }
          next = next == 1 ? 2 : 1;
          ctx.sleepBetween(2_500, 3_500);
        }
      }
      ctx.untilDeadline();
    }
  }

  /**
   * An admin call on a loaded machine may time out although it went through: retry, then give up
   * loudly.
   */
  static void retrying(
      DrillContext ctx, String what, Runnable call, java.util.function.BooleanSupplier done)
      throws InterruptedException {
    for (int attempt = 1; ; attempt++) {
      try {
        if (attempt > 1 && done.getAsBoolean()) {
          return;
        }
        call.run();
        return;
      } catch (FencingException e) {
        if (attempt == 5) {
          throw new DrillException(what + " failed " + attempt + " times: " + e.getMessage());
        }
        ctx.note(
            what
                + " attempt "
                + attempt
                + " failed ("
                + e.getMessage().lines().findFirst().orElse("")
                + "); retrying");
        Thread.sleep(1_000);
      }
    }
  }

  /** A fourth node joins under load, then an original member is removed and stopped. */
  static final class Membership implements Drill {
    private PeerAddress joiner;
    private String removed;

    @Override
    public String name() {
      return "membership";
    }

    @Override
    public String summary() {
      return "add a fourth node under load, then remove an original member and stop it";
    }

    @Override
    public List<PeerAddress> members(DrillCluster cluster, List<PeerAddress> peers) {
      List<PeerAddress> original = peers.subList(0, 3);
      for (PeerAddress peer : original) {
        cluster.define(peer, original, null, 0);
      }
      joiner = peers.get(3);
      return original;
    }

    @Override
    public void inject(DrillContext ctx) throws Exception {
      try (FencingAdmin admin = FencingAdmin.connect(ctx.cluster.adminConfig())) {
        ctx.sleep(Duration.ofSeconds(2));
        List<PeerAddress> grown =
            new ArrayList<>(ctx.cluster.nodes().stream().map(DrillCluster.Node::peer).toList());
        grown.add(joiner);
        ctx.cluster.define(joiner, grown, null, 0);
        ctx.cluster.start(joiner.id(), true);
        ctx.cluster.awaitListening(joiner, Duration.ofSeconds(90));
        ctx.fault("members add " + joiner);
        retrying(
            ctx,
            "members add",
            () -> admin.addMember(joiner),
            () -> admin.membership().member(joiner.id()).isPresent());
        ctx.note("members: " + admin.membership().peersProperty());
        ctx.sleep(Duration.ofSeconds(3));
        removed = "n1";
        ctx.fault(
            "members remove " + removed + (removed.equals(ctx.leader()) ? " (the leader)" : ""));
        retrying(
            ctx,
            "members remove",
            () -> admin.removeMember(removed),
            () -> admin.membership().member(removed).isEmpty());
        ctx.cluster.kill(removed);
        ctx.cluster.forget(removed);
        ctx.note("members: " + admin.membership().peersProperty() + "; " + removed + " stopped");
      }
      ctx.untilDeadline();
    }
  }
}
