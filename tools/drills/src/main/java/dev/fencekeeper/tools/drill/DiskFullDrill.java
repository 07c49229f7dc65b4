package dev.fencekeeper.tools.drill;

import dev.fencekeeper.client.FencingAdmin;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.NodeStatus;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.tools.ExitCode;
import dev.fencekeeper.tools.drill.check.Finding;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * n3's storage lives on a small tmpfs of its own. Under load it is filled until its free space
 * drops below the node's reserve, first while n3 follows, then while it leads. Each time n3 must
 * stop with the storage-full exit code (leadership moving on without it), refuse to start while the
 * disk is still full, and, once the filler is deleted, start and catch up with the cluster. The
 * history checker then proves no acknowledged write was lost. Needs root (mount).
 */
final class DiskFullDrill implements Drill {
  static final String FULL_NODE = "n3";

  /** Room for the node's 64 MiB reserve, its log and the filler's steps. */
  static final long TMPFS_BYTES = 160L << 20;

  private static final long RESERVE_BYTES = 64L << 20;
  private static final Duration STOP_WITHIN = Duration.ofSeconds(20);

  /**
   * A JVM start on a loaded two-core machine can take tens of seconds before the node checks its
   * disk.
   */
  private static final Duration REFUSE_WITHIN = Duration.ofSeconds(60);

  private static final Duration CATCH_UP_WITHIN = Duration.ofSeconds(90);
  private Path mount;

  @Override
  public String name() {
    return "disk-full";
  }

  @Override
  public String summary() {
    return "n3's storage (a small tmpfs) filled below its reserve while it follows, then while it"
        + " leads; it must stop, and rejoin once space is freed";
  }

  @Override
  public List<PeerAddress> members(DrillCluster cluster, List<PeerAddress> peers) {
    List<PeerAddress> three = peers.subList(0, 3);
    for (PeerAddress peer : three) {
      cluster.define(peer, three, null, 0);
    }
    mount = cluster.node(FULL_NODE).dir();
    // The node's config file lives beside its directory, not in it; node.log and the storage go on
    // the tmpfs.
    run(
        "mount",
        "-t",
        "tmpfs",
        "-o",
        "size=" + TMPFS_BYTES,
        "fencekeeper-drill-disk-full",
        mount.toString());
    return three;
  }

  @Override
  public void inject(DrillContext ctx) throws Exception {
    ctx.sleep(Duration.ofSeconds(2));
    try (FencingAdmin admin = FencingAdmin.connect(ctx.cluster.adminConfig())) {
      if (ctx.leader().equals(FULL_NODE)) {
        transfer(ctx, admin, "n1");
      }
      fillUntilStopped(ctx, role(ctx));
      ctx.sleep(Duration.ofSeconds(2));
      ctx.fault("leadership to " + FULL_NODE);
      transfer(ctx, admin, FULL_NODE);
      fillUntilStopped(ctx, role(ctx));
    }
    ctx.untilDeadline();
  }

  private static String role(DrillContext ctx) throws InterruptedException {
    return ctx.leader().equals(FULL_NODE) ? "leader" : "follower";
  }

  /**
   * Moves leadership to {@code to}, retrying a transfer that races an election; says where it
   * ended.
   */
  private static void transfer(DrillContext ctx, FencingAdmin admin, String to)
      throws InterruptedException {
    for (int attempt = 0; attempt < 5; attempt++) {
      try {
        ctx.note("leader is now " + admin.transferLeadership(to));
        return;
      } catch (RuntimeException e) {
        ctx.note("transfer to " + to + " did not complete: " + e.getMessage());
        ctx.sleep(Duration.ofSeconds(1));
        if (ctx.leader().equals(to)) {
          return;
        }
      }
    }
  }

  /**
   * Fills n3's tmpfs to just above the reserve, then past it, and checks that n3 stops with exit
   * code 22, that a start while the disk is full refuses with the same code, and that n3 starts and
   * catches up once the filler is gone.
   */
  private void fillUntilStopped(DrillContext ctx, String role) throws InterruptedException {
    Path filler = mount.resolve("filler");
    ctx.fault(
        "filling "
            + FULL_NODE
            + "'s storage ("
            + role
            + ") to "
            + (RESERVE_BYTES >> 20)
            + " MiB + 8 MiB free");
    fill(filler, RESERVE_BYTES + (8L << 20));
    ctx.sleep(Duration.ofSeconds(1));
    if (ctx.cluster.exitCode(FULL_NODE).isPresent()) {
      fail(
          ctx,
          FULL_NODE
              + " is not running (exit "
              + ctx.cluster.exitCode(FULL_NODE).get()
              + ") with 8 MiB free above its reserve");
      return;
    }
    ctx.fault(
        "filling "
            + FULL_NODE
            + "'s storage below its reserve ("
            + (RESERVE_BYTES >> 21)
            + " MiB free)");
    fill(filler, RESERVE_BYTES / 2);
    Optional<Integer> exit = awaitExit(FULL_NODE, ctx, STOP_WITHIN);
    if (exit.isEmpty() || exit.get() != ExitCode.STORAGE_FULL.code()) {
      fail(
          ctx,
          FULL_NODE
              + " ("
              + role
              + ") with "
              + (RESERVE_BYTES >> 21)
              + " MiB free: "
              + exit.map(code -> "exited " + code)
                  .orElse("still running after " + STOP_WITHIN.toSeconds() + " s")
              + ", expected exit "
              + ExitCode.STORAGE_FULL.code());
      ctx.cluster.kill(FULL_NODE);
    } else {
      ctx.note(
          FULL_NODE
              + " stopped with exit "
              + exit.get()
              + " (storage full); leader "
              + ctx.leader());
    }
    ctx.cluster.start(FULL_NODE);
    Optional<Integer> refused = awaitExit(FULL_NODE, ctx, REFUSE_WITHIN);
    if (refused.isEmpty() || refused.get() != ExitCode.STORAGE_FULL.code()) {
      fail(
          ctx,
          FULL_NODE
              + " started on a full disk: "
              + refused.map(code -> "exited " + code).orElse("it runs"));
      ctx.cluster.kill(FULL_NODE);
    } else {
      ctx.note(FULL_NODE + " refused to start on the full disk (exit " + refused.get() + ")");
    }
    try {
      Files.deleteIfExists(filler);
    } catch (IOException e) {
      throw new DrillException("cannot delete " + filler + ": " + e.getMessage());
    }
    ctx.fault("space freed; starting " + FULL_NODE);
    ctx.cluster.start(FULL_NODE);
    awaitCaughtUp(ctx);
  }

  private void awaitCaughtUp(DrillContext ctx) throws InterruptedException {
    long deadline = System.nanoTime() + CATCH_UP_WITHIN.toNanos();
    String last = "no answer";
    while (System.nanoTime() < deadline) {
      // A fresh client each round: one whose channel to n3 broke while n3 was down may stay closed.
      try (FencingClient client =
          FencingClient.connect(ctx.cluster.clientConfig(), "disk-full-probe")) {
        if (ctx.cluster.exitCode(FULL_NODE).isPresent()) {
          fail(
              ctx,
              FULL_NODE
                  + " exited "
                  + ctx.cluster.exitCode(FULL_NODE).get()
                  + " after space was freed;"
                  + " see "
                  + ctx.cluster.node(FULL_NODE).logFile());
          return;
        }
        try {
          String leader = ctx.leader();
          NodeStatus leading = client.nodeStatus(leader, Duration.ofSeconds(2));
          NodeStatus rejoined = client.nodeStatus(FULL_NODE, Duration.ofSeconds(2));
          last =
              "applied "
                  + rejoined.appliedIndex()
                  + ", leader "
                  + leader
                  + " committed "
                  + leading.commitIndex();
          if (!rejoined.leaderId().isEmpty() && rejoined.appliedIndex() >= leading.commitIndex()) {
            ctx.note(FULL_NODE + " rejoined: " + last);
            return;
          }
        } catch (RuntimeException e) {
          last = e.getMessage();
        }
      }
      Thread.sleep(250);
    }
    fail(
        ctx,
        FULL_NODE
            + " did not catch up within "
            + CATCH_UP_WITHIN.toSeconds()
            + " s after space was freed: "
            + last);
  }

  private static Optional<Integer> awaitExit(String id, DrillContext ctx, Duration within)
      throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (System.nanoTime() < deadline) {
      Optional<Integer> code = ctx.cluster.exitCode(id);
      if (code.isPresent()) {
        return code;
      }
      Thread.sleep(50);
    }
    return Optional.empty();
  }

  private static void fail(DrillContext ctx, String what) {
    ctx.violation(
        new Finding(Finding.Kind.NODE_NOT_RECOVERED_FROM_FULL_DISK, what, List.of(), List.of()));
  }

  /**
   * Grows {@code filler} until the file system has {@code leaveFree} bytes free (never shrinks it).
   */
  private void fill(Path filler, long leaveFree) {
    try (OutputStream out =
        Files.newOutputStream(filler, StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
      byte[] chunk = new byte[1 << 20];
      long free = Files.getFileStore(mount).getUsableSpace();
      while (free > leaveFree) {
        int n = (int) Math.min(chunk.length, free - leaveFree);
        out.write(chunk, 0, n);
        out.flush();
        free = Files.getFileStore(mount).getUsableSpace();
      }
    } catch (IOException e) {
      throw new DrillException("cannot fill " + filler + ": " + e.getMessage());
    }
  }

  @Override
  public void heal(DrillContext ctx) {
    try {
      Files.deleteIfExists(mount.resolve("filler"));
    } catch (IOException e) {
      ctx.note("cannot delete the filler: " + e.getMessage());
    }
    Drill.super.heal(ctx);
  }

  @Override
  public void tearDown() {
    if (mount != null) {
      try {
        run("umount", "-l", mount.toString());
      } catch (DrillException e) {
        System.err.println("fencekeeper drill: " + e.getMessage());
      }
    }
  }

  private static void run(String... command) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      boolean done = p.waitFor(20, TimeUnit.SECONDS);
      String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      if (!done || p.exitValue() != 0) {
        p.destroyForcibly();
        throw new DrillException(
            "the disk-full drill needs root to mount a tmpfs: "
                + String.join(" ", command)
                + " failed: "
                + output,
            ExitCode.USAGE);
      }
    } catch (IOException e) {
      throw new DrillException(String.join(" ", command) + ": " + e.getMessage(), ExitCode.USAGE);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DrillException("interrupted during " + String.join(" ", command));
    }
  }
}
