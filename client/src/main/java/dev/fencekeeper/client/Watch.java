package dev.fencekeeper.client;

import dev.fencekeeper.proto.WatchRequest;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running watch of lease events. Long-polls the cluster from the last position delivered, so a
 * reconnect or a leader change neither skips nor repeats an event: every replica numbers events by
 * the log index of the entry that caused them.
 */
public final class Watch implements AutoCloseable {
  /** Start with the next event committed after the watch begins. */
  public static final long FROM_NOW = -1;

  private static final Logger LOG = LoggerFactory.getLogger(Watch.class);
  private static final long POLL_MS = 5_000;

  private final FencingClient client;
  private final String name;
  private final boolean prefix;
  private final Consumer<dev.fencekeeper.proto.LeaseEvent> listener;
  private volatile boolean closed;
  private volatile Consumer<Result> compactedHandler = r -> {};
  private long afterIndex;
  private int afterSeq;

  Watch(
      FencingClient client,
      String name,
      boolean prefix,
      long afterIndex,
      Consumer<dev.fencekeeper.proto.LeaseEvent> listener) {
    this.client = client;
    this.name = name;
    this.prefix = prefix;
    this.listener = listener;
    this.afterIndex = afterIndex;
    this.afterSeq = Integer.MAX_VALUE; // everything of entry `afterIndex` counts as seen
    poll(afterIndex == FROM_NOW ? 0 : POLL_MS);
  }

  /**
   * Called with the COMPACTED answer when the position fell out of the cluster's event window; the
   * watch then stops. Re-read the state and start a new watch.
   */
  public Watch onCompacted(Consumer<Result> handler) {
    this.compactedHandler = handler;
    return this;
  }

  /** The position of the last event delivered (its log index). */
  public synchronized long lastIndex() {
    return afterIndex;
  }

  private void poll(long timeoutMs) {
    if (closed) {
      return;
    }
    // From now: a position past every event asks only for the node's applied index, to start there.
    WatchRequest.Builder request =
        WatchRequest.newBuilder()
            .setAfterIndex(afterIndex == FROM_NOW ? Long.MAX_VALUE : afterIndex)
            .setAfterSeq(afterSeq)
            .setTimeoutMs(timeoutMs);
    if (prefix) {
      request.setPrefix(name);
    } else {
      request.setResource(name);
    }
    client
        .calls()
        .watchOnce(request.build())
        .whenComplete(
            (response, error) -> {
              if (closed) {
                return;
              }
              if (error != null) {
                LOG.debug(
                    "Watch of {} failed, resuming from {}: {}", name, afterIndex, error.toString());
                client.calls().later(() -> poll(POLL_MS), 100, TimeUnit.MILLISECONDS);
                return;
              }
              if (response.getCode() == dev.fencekeeper.proto.ResultCode.OVERLOADED) {
                // Too many of this identity's watches, or reads, wait on that node: back off, keep
                // the position.
                LOG.debug("Watch of {} refused: {}", name, response.getMessage());
                client.calls().later(() -> poll(POLL_MS), 1, TimeUnit.SECONDS);
                return;
              }
              if (afterIndex == FROM_NOW) {
                synchronized (this) {
                  afterIndex = response.getAppliedIndex();
                }
                poll(POLL_MS);
                return;
              }
              if (response.getCode() == dev.fencekeeper.proto.ResultCode.COMPACTED) {
                closed = true;
                compactedHandler.accept(new Result(response));
                return;
              }
              for (dev.fencekeeper.proto.LeaseEvent e : response.getEventsList()) {
                synchronized (this) {
                  afterIndex = e.getIndex();
                  afterSeq = e.getSeq();
                }
                try {
                  listener.accept(e);
                } catch (RuntimeException ex) {
                  LOG.warn("Watch listener failed on {}", e, ex);
                }
              }
              poll(POLL_MS);
            });
  }

  /**
   * Stops the watch; no event is delivered after this returns (one already being delivered may
   * finish).
   */
  @Override
  public void close() {
    closed = true;
  }
}
