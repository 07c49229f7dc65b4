package dev.fencekeeper.tools.drill;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.proto.NodeInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * Polls every node's view of the cluster: which leader in which term, to count the elections a
 * drill saw.
 */
final class LeaderMonitor implements AutoCloseable {
  record Leadership(long term, String leader, long firstSeenNanos) {}

  private final DrillCluster cluster;
  private final ClusterConfig config;
  private volatile FencingClient client;
  private final TreeMap<Long, Leadership> byTerm = new TreeMap<>();
  private final Thread thread;
  private volatile boolean stopping;

  LeaderMonitor(DrillCluster cluster, ClusterConfig config) {
    this.cluster = cluster;
    this.config = config;
    this.client = FencingClient.connect(config, "drill-monitor");
    this.thread = new Thread(this::run, "drill-leader-monitor");
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  private void run() {
    while (!stopping) {
      boolean answered = false;
      for (DrillCluster.Node node : cluster.nodes()) {
        if (stopping || !cluster.isServing(node.id())) {
          continue;
        }
        try {
          NodeInfo info = Wire.nodeInfo(client, node.id(), Duration.ofMillis(800));
          answered = true;
          if (!info.getLeaderId().isEmpty()) {
            synchronized (this) {
              byTerm.putIfAbsent(
                  info.getTerm(),
                  new Leadership(info.getTerm(), info.getLeaderId(), System.nanoTime()));
            }
          }
        } catch (RuntimeException e) {
          // Down, paused or cut off: the others answer.
        }
      }
      if (!answered && !stopping) {
        // Channels to nodes that were all down may sit in reconnect back-off: start afresh.
        synchronized (this) {
          client.close();
          client = FencingClient.connect(config, "drill-monitor");
        }
      }
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** Every term in which some node named a leader, in order. */
  synchronized List<Leadership> leaderships() {
    return new ArrayList<>(byTerm.values());
  }

  @Override
  public void close() {
    stopping = true;
    thread.interrupt();
    synchronized (this) {
      client.close();
    }
  }
}
