package dev.fencekeeper.tools.drill;

import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.tools.ExitCode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Real network cuts between nodes: each node runs in a network namespace the drill creates, all
 * joined by a bridge in another namespace of its own, with one veth into this (root) namespace for
 * the clients. A cut is a pair of blackhole routes inside the two nodes' namespaces, so the clients
 * keep reaching both sides. Nothing of the host's networking changes except that one veth and its
 * /24 route, removed at the end.
 */
final class PartitionDrill implements Drill {
  private final String prefix =
      "fkd" + Integer.toHexString(new SecureRandom().nextInt(0xfff) + 0x1000);
  private final int subnet = 1 + new SecureRandom().nextInt(250);
  private final List<String> namespaces = new ArrayList<>();
  private final Set<String> blackholes = new LinkedHashSet<>();
  private boolean hostVethCreated;

  @Override
  public String name() {
    return "partition";
  }

  @Override
  public String summary() {
    return "cut the leader off from both followers, then a minority/majority split; clients reach"
        + " both sides";
  }

  private String address(int host) {
    return "10.77." + subnet + "." + host;
  }

  private String nodeNamespace(int i) {
    return prefix + "-n" + i;
  }

  @Override
  public List<PeerAddress> members(DrillCluster cluster, List<PeerAddress> loopbackPeers) {
    String bridge = prefix + "-br";
    try {
      ip("netns", "add", bridge);
    } catch (DrillException e) {
      throw new DrillException(
          "the partition drill needs network namespaces (run as root, with iproute2): "
              + e.getMessage(),
          ExitCode.USAGE);
    }
    namespaces.add(bridge);
    ip("-n", bridge, "link", "set", "lo", "up");
    ip("-n", bridge, "link", "add", "br0", "type", "bridge");
    ip("-n", bridge, "link", "set", "br0", "up");
    String host = prefix + "h";
    ip("link", "add", host, "type", "veth", "peer", "name", prefix + "hb");
    hostVethCreated = true;
    ip("link", "set", prefix + "hb", "netns", bridge);
    ip("addr", "add", address(1) + "/24", "dev", host);
    ip("link", "set", host, "up");
    ip("-n", bridge, "link", "set", prefix + "hb", "master", "br0");
    ip("-n", bridge, "link", "set", prefix + "hb", "up");
    List<PeerAddress> peers = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      peers.add(new PeerAddress("n" + i, address(10 + i), loopbackPeers.get(i - 1).port()));
    }
    for (int i = 1; i <= 3; i++) {
      String ns = nodeNamespace(i);
      ip("netns", "add", ns);
      namespaces.add(ns);
      ip("-n", ns, "link", "set", "lo", "up");
      String inside = prefix + "n" + i;
      String outside = prefix + "b" + i;
      ip("link", "add", inside, "type", "veth", "peer", "name", outside);
      ip("link", "set", inside, "netns", ns);
      ip("link", "set", outside, "netns", bridge);
      ip("-n", ns, "addr", "add", address(10 + i) + "/24", "dev", inside);
      ip("-n", ns, "link", "set", inside, "up");
      ip("-n", bridge, "link", "set", outside, "master", "br0");
      ip("-n", bridge, "link", "set", outside, "up");
      cluster.define(peers.get(i - 1), peers, ns, 0);
    }
    return peers;
  }

  private int index(String nodeId) {
    return Integer.parseInt(nodeId.substring(1));
  }

  /** Both directions between nodes a and b stop: each drops packets for the other. */
  private void cut(int a, int b) {
    blackhole("add", a, b);
    blackhole("add", b, a);
  }

  private void blackhole(String verb, int from, int to) {
    String route = nodeNamespace(from) + " " + address(10 + to);
    ip("-n", nodeNamespace(from), "route", verb, "blackhole", address(10 + to) + "/32");
    if (verb.equals("add")) {
      blackholes.add(route);
    } else {
      blackholes.remove(route);
    }
  }

  private void healAll() {
    for (String route : List.copyOf(blackholes)) {
      String[] parts = route.split(" ");
      try {
        ip("-n", parts[0], "route", "del", "blackhole", parts[1] + "/32");
      } catch (DrillException e) {
        // Gone with its namespace already.
      }
      blackholes.remove(route);
    }
  }

  private void isolate(DrillContext ctx, int alone, String what) throws InterruptedException {
    List<Integer> others = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      if (i != alone) {
        others.add(i);
      }
    }
    for (int other : others) {
      cut(alone, other);
    }
    ctx.fault(
        what
            + ": n"
            + alone
            + " | n"
            + others.get(0)
            + ", n"
            + others.get(1)
            + " (blackhole routes; clients reach both sides)");
    ctx.sleepBetween(3_000, 5_000);
    healAll();
    ctx.note("partition healed");
    ctx.sleepBetween(2_500, 3_500);
  }

  @Override
  public void inject(DrillContext ctx) throws Exception {
    ctx.sleep(Duration.ofSeconds(2));
    boolean leaderTurn = true;
    while (ctx.roomFor(Duration.ofSeconds(7))) {
      int leader = index(ctx.leader());
      if (leaderTurn) {
        isolate(ctx, leader, "cut leader n" + leader + " off from both followers");
      } else {
        int follower = leader % 3 + 1;
        isolate(ctx, follower, "minority/majority split, minority n" + follower);
      }
      leaderTurn = !leaderTurn;
    }
    ctx.untilDeadline();
  }

  @Override
  public void heal(DrillContext ctx) {
    healAll();
    Drill.super.heal(ctx);
  }

  @Override
  public void tearDown() {
    blackholes.clear();
    for (String ns : namespaces) {
      try {
        ip("netns", "del", ns);
      } catch (DrillException e) {
        // Already gone.
      }
    }
    namespaces.clear();
    if (hostVethCreated) {
      hostVethCreated = false;
      try {
        ip("link", "del", prefix + "h");
      } catch (DrillException e) {
        // Deleting the bridge namespace removed its peer, and with it this end.
      }
    }
  }

  private static void ip(String... args) {
    List<String> command = new ArrayList<>();
    command.add("ip");
    command.addAll(List.of(args));
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      boolean done = p.waitFor(20, TimeUnit.SECONDS);
      String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      if (!done || p.exitValue() != 0) {
        p.destroyForcibly();
        throw new DrillException(String.join(" ", command) + " failed: " + output);
      }
    } catch (IOException e) {
      throw new DrillException(String.join(" ", command) + ": " + e.getMessage(), ExitCode.USAGE);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DrillException("interrupted during " + String.join(" ", command));
    }
  }
}
