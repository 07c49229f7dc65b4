package dev.fencekeeper.tools.drill;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Watch;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.proto.LeaseEvent;
import dev.fencekeeper.tools.drill.history.HistoryRecorder;
import dev.fencekeeper.tools.drill.history.LeaseEventRecord;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;

/**
 * Follows every lease event from the first log entry, so the checker sees grants, renewals and ends
 * in commit order with the state machine's own times. Each event is stamped with when it arrived
 * here: it certainly happened before that.
 */
final class EventWatcher implements AutoCloseable {
  private final FencingClient client;
  private final HistoryRecorder recorder;
  private final Set<String> seen = new HashSet<>();
  private final Set<String> grants = new HashSet<>();
  private final Watch watch;
  private volatile boolean compacted;

  EventWatcher(ClusterConfig config, HistoryRecorder recorder) {
    this.client = FencingClient.connect(config, "drill-watcher");
    this.recorder = recorder;
    this.watch = Wire.watch(client, "", true, 0, this::onEvent).onCompacted(r -> compacted = true);
  }

  private void onEvent(LeaseEvent e) {
    long observed = System.nanoTime();
    synchronized (this) {
      if (!seen.add(e.getIndex() + "." + e.getSeq())) {
        return;
      }
      recorder.event(
          new LeaseEventRecord(
              e.getIndex(),
              e.getSeq(),
              LeaseEventRecord.Type.valueOf(e.getType().name()),
              e.getResource(),
              e.getToken(),
              e.getOwner(),
              e.getExpiresAtMs(),
              e.getAtMs(),
              observed));
      if (e.getType() == LeaseEvent.Type.ACQUIRED) {
        grants.add(e.getResource() + "\u0000" + e.getToken());
      }
      notifyAll();
    }
  }

  boolean compacted() {
    return compacted;
  }

  /**
   * Waits until the watch delivered the grant of {@code token}: every earlier event has arrived
   * too.
   */
  synchronized boolean awaitGrant(String resource, long token, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!compacted && !grants.contains(resource + "\u0000" + token)) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      wait(Math.max(1, Math.min(200, left / 1_000_000)));
    }
    return !compacted;
  }

  @Override
  public void close() {
    watch.close();
    client.close();
  }
}
