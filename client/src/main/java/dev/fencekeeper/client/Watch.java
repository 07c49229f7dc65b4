package dev.fencekeeper.client;

import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.WatchRequest;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.ratis.thirdparty.io.grpc.ClientCall;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running watch of lease events: one Watch stream open at a node (the leader when known), which
 * sends the events as they commit. A stream that ends (the node stopped, the connection broke) is
 * re-opened, at whichever node answers, from the last position delivered, so neither a reconnect
 * nor a leader change skips or repeats an event: every replica numbers events by the log index of
 * the entry that caused them and their order within it.
 */
public final class Watch implements AutoCloseable {
  /** Start with the next event committed after the watch begins. */
  public static final long FROM_NOW = -1;

  private static final Logger LOG = LoggerFactory.getLogger(Watch.class);
  private static final long FIRST_RETRY_MS = 100;
  private static final long MAX_RETRY_MS = 1_000;
  private static final long OVERLOADED_RETRY_MS = 1_000;
  // How long one stream lasts before the node ends it and the watch re-opens it (at the leader when
  // one is known) from its last event. A node cut off from the leader but still connected applies
  // nothing and raises no error: without this bound a watch on it would stay silent until the
  // partition heals.
  private static final long STREAM_TURN_MS = 5_000;

  private final ClusterCalls calls;
  private final String name;
  private final boolean prefix;
  private final Consumer<dev.fencekeeper.proto.LeaseEvent> listener;
  private volatile boolean closed;
  private volatile Consumer<Result> compactedHandler = r -> {};
  // Guarded by this: the position delivered up to, the stream open now, failures in a row.
  private long afterIndex;
  private int afterSeq;
  private ClientCall<WatchRequest, Response> stream;
  private int failures;

  Watch(
      ClusterCalls calls,
      String name,
      boolean prefix,
      long afterIndex,
      Consumer<dev.fencekeeper.proto.LeaseEvent> listener) {
    this.calls = calls;
    this.name = name;
    this.prefix = prefix;
    this.listener = listener;
    this.afterIndex = afterIndex;
    this.afterSeq = Integer.MAX_VALUE; // everything of entry `afterIndex` counts as seen
    open();
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

  private void open() {
    if (closed) {
      return;
    }
    ClientPortTransport port = calls.port();
    String address;
    long index;
    int seq;
    synchronized (this) {
      index = afterIndex;
      seq = afterSeq;
    }
    try {
      address = port.watchTarget();
      if (index == FROM_NOW) {
        // From now: the node's applied index is where the stream starts.
        port.appliedIndexAt(address)
            .whenComplete(
                (applied, error) -> {
                  if (error != null) {
                    failed(address, error);
                    return;
                  }
                  synchronized (this) {
                    if (afterIndex == FROM_NOW) {
                      afterIndex = applied;
                    }
                  }
                  open();
                });
        return;
      }
      WatchRequest.Builder request =
          WatchRequest.newBuilder()
              .setAfterIndex(index)
              .setAfterSeq(seq)
              .setTimeoutMs(STREAM_TURN_MS);
      if (prefix) {
        request.setPrefix(name);
      } else {
        request.setResource(name);
      }
      Events events = new Events(address);
      ClientCall<WatchRequest, Response> call = port.openWatch(address, request.build(), events);
      synchronized (this) {
        stream = call;
      }
      if (closed) {
        call.cancel("the watch was closed", null);
      }
    } catch (RuntimeException e) {
      // The client is closing (no channel to open), or the address did not parse.
      LOG.debug("Watch of {} not opened: {}", name, e.toString());
      if (!closed) {
        retryLater(MAX_RETRY_MS);
      }
    }
  }

  /** The messages of one stream. */
  private final class Events implements StreamObserver<Response> {
    private final String address;
    private boolean overloaded;

    Events(String address) {
      this.address = address;
    }

    @Override
    public void onNext(Response message) {
      if (closed) {
        return;
      }
      if (message.getCode() == ResultCode.OVERLOADED) {
        // Too many of this identity's watches on that node: the stream ends; back off and keep
        // the position.
        LOG.debug("Watch of {} refused: {}", name, message.getMessage());
        overloaded = true;
        return;
      }
      if (message.getCode() == ResultCode.COMPACTED) {
        closed = true;
        compactedHandler.accept(new Result(message));
        return;
      }
      Response fresh;
      synchronized (Watch.this) {
        failures = 0;
        fresh = ClientPortTransport.onlyAfter(message, afterIndex, afterSeq);
      }
      if (fresh == null) {
        return;
      }
      for (dev.fencekeeper.proto.LeaseEvent e : fresh.getEventsList()) {
        if (closed) {
          return;
        }
        synchronized (Watch.this) {
          afterIndex = e.getIndex();
          afterSeq = e.getSeq();
        }
        try {
          listener.accept(e);
        } catch (RuntimeException ex) {
          LOG.warn("Watch listener failed on {}", e, ex);
        }
      }
    }

    @Override
    public void onError(Throwable t) {
      if (!closed) {
        failed(address, t);
      }
    }

    @Override
    public void onCompleted() {
      if (!closed) {
        LOG.debug("Watch of {} ended by {}, resuming from {}", name, address, lastIndex());
        retryLater(overloaded ? OVERLOADED_RETRY_MS : FIRST_RETRY_MS);
      }
    }
  }

  private void failed(String address, Throwable error) {
    LOG.debug("Watch of {} at {} failed, resuming from {}: {}", name, address, lastIndex(), error);
    ClientPortTransport port = calls.port();
    port.attemptFailed(error);
    if (Status.fromThrowable(error).getCode() == Status.Code.UNAVAILABLE) {
      port.failed(address);
    }
    long pauseMs;
    synchronized (this) {
      pauseMs = Math.min(FIRST_RETRY_MS << Math.min(failures, 4), MAX_RETRY_MS);
      failures++;
    }
    retryLater(pauseMs);
  }

  private void retryLater(long pauseMs) {
    calls.later(this::open, pauseMs, TimeUnit.MILLISECONDS);
  }

  /**
   * Stops the watch; no event is delivered after this returns (one already being delivered may
   * finish).
   */
  @Override
  public void close() {
    closed = true;
    ClientCall<WatchRequest, Response> call;
    synchronized (this) {
      call = stream;
      stream = null;
    }
    if (call != null) {
      call.cancel("the watch was closed", null);
    }
  }
}
