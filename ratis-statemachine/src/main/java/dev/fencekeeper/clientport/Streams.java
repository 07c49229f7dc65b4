package dev.fencekeeper.clientport;

import dev.fencekeeper.config.Limits;
import dev.fencekeeper.config.StreamLimits;
import dev.fencekeeper.proto.LeaseEvent;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.SessionRequest;
import dev.fencekeeper.proto.SessionResponse;
import dev.fencekeeper.proto.WatchRequest;
import dev.fencekeeper.statemachine.EventFeed;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.ratis.thirdparty.io.grpc.stub.ServerCallStreamObserver;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;

/**
 * The streams of one node's client port: Watch streams of lease events, and Session streams ({@link
 * SessionCall}). Each is bounded twice: per client identity (watches by {@code
 * limits.watches-per-client.max}, sessions by {@code limits.sessions-per-client.max}), and by what
 * it may leave unread ({@link OutboundStream}, {@code limits.stream-buffer.max}).
 */
final class Streams {
  /** The most events one Watch message carries. */
  static final int MAX_EVENTS_PER_MESSAGE = 1000;

  private final EventFeed feed;
  private final EventHub hub;
  private final Limits limits;
  private final StreamLimits streamLimits;
  private final Executor executor;
  private final ScheduledExecutorService timer;
  private final IdentityCounts watches = new IdentityCounts();
  private final IdentityCounts sessions = new IdentityCounts();
  private volatile SessionCall.Node node;

  Streams(
      EventFeed feed,
      EventHub hub,
      Limits limits,
      StreamLimits streamLimits,
      Executor executor,
      ScheduledExecutorService timer) {
    this.feed = feed;
    this.hub = hub;
    this.limits = limits;
    this.streamLimits = streamLimits;
    this.executor = executor;
    this.timer = timer;
  }

  /** What sessions need of the node: leadership, redirects and the command queue. */
  void setNode(SessionCall.Node node) {
    this.node = node;
  }

  // ---------------------------------------------------------------------------------------------
  // Watch

  void watch(WatchRequest request, String caller, StreamObserver<Response> rawOut) {
    ServerCallStreamObserver<Response> out = (ServerCallStreamObserver<Response>) rawOut;
    if (!watches.tryOpen(caller, limits.maxWatchesPerClient())) {
      FencekeeperService.reply(
          out,
          overloaded(
              "identity '"
                  + caller
                  + "' already has "
                  + limits.maxWatchesPerClient()
                  + " watches open on this node (limits.watches-per-client.max); nothing is"
                  + " watched, retry later"));
      return;
    }
    int max =
        request.getMaxEvents() > 0
            ? Math.min(request.getMaxEvents(), MAX_EVENTS_PER_MESSAGE)
            : MAX_EVENTS_PER_MESSAGE;
    String resource = request.getResource();
    String prefix = request.getPrefix();
    Response cutOff = unread();
    EventHub.Receiver[] registered = new EventHub.Receiver[1];
    OutboundStream<Response> stream =
        new OutboundStream<>(
            out,
            executor,
            timer,
            streamLimits.maxBufferedMessages(),
            () -> {
              if (registered[0] != null) {
                hub.removeWatch(resource, prefix, registered[0]);
              }
              watches.close(caller);
            });
    EventHub.Receiver receiver =
        new EventHub.Receiver() {
          @Override
          public void onEvents(long index, List<LeaseEvent> events) {
            for (Response message : messages(events, max)) {
              stream.offer(message, cutOff);
            }
          }

          @Override
          public void onGap(long index) {
            stream.cutOff(gap(index));
          }
        };
    Predicate<LeaseEvent> matches =
        resource.isEmpty()
            ? e -> e.getResource().startsWith(prefix)
            : e -> e.getResource().equals(resource);
    feed.replay(
        request.getAfterIndex(),
        request.getAfterSeq(),
        matches,
        replay -> {
          if (replay.compacted()) {
            stream.finish(compacted(replay));
            return;
          }
          for (Response message : messages(replay.events(), max)) {
            stream.offer(message, cutOff);
          }
          if (!stream.isEnded()) {
            registered[0] = receiver;
            hub.addWatch(resource, prefix, receiver);
          }
        });
    if (stream.isEnded() && registered[0] != null) {
      hub.removeWatch(resource, prefix, receiver); // ended while registering
    }
    if (request.getTimeoutMs() > 0) {
      timer.schedule(() -> stream.finish(null), request.getTimeoutMs(), TimeUnit.MILLISECONDS);
    }
  }

  /** {@code events} as FOUND messages of at most {@code max} events each, in order. */
  static List<Response> messages(List<LeaseEvent> events, int max) {
    List<Response> messages = new ArrayList<>();
    for (int from = 0; from < events.size(); from += max) {
      List<LeaseEvent> part = events.subList(from, Math.min(events.size(), from + max));
      messages.add(
          Response.newBuilder()
              .setCode(ResultCode.FOUND)
              .addAllEvents(part)
              .setAppliedIndex(part.get(part.size() - 1).getIndex())
              .build());
    }
    return messages;
  }

  // ---------------------------------------------------------------------------------------------
  // Session

  StreamObserver<SessionRequest> session(String caller, StreamObserver<SessionResponse> rawOut) {
    return new SessionCall(
        node,
        feed,
        hub,
        sessions,
        streamLimits,
        caller,
        (ServerCallStreamObserver<SessionResponse>) rawOut,
        executor,
        timer);
  }

  /** Every open session ends with NOT_LEADER: this node stopped leading. */
  void leadershipLost() {
    for (EventHub.Receiver r : hub.sessionReceivers()) {
      if (r instanceof SessionCall.Events events) {
        events.call().endNotLeader();
      }
    }
  }

  // ---------------------------------------------------------------------------------------------

  Response unread() {
    return overloaded(
        "the client did not read its stream: more than "
            + streamLimits.maxBufferedMessages()
            + " messages were left unread (limits.stream-buffer.max); the stream is closed");
  }

  static Response overloaded(String message) {
    return Response.newBuilder().setCode(ResultCode.OVERLOADED).setMessage(message).build();
  }

  static Response compacted(EventFeed.Replay replay) {
    return Response.newBuilder()
        .setCode(ResultCode.COMPACTED)
        .setMessage(
            "events up to index "
                + replay.horizonIndex()
                + " are no longer kept on this node; re-read the state and resume from index "
                + replay.appliedIndex())
        .setAppliedIndex(replay.appliedIndex())
        .build();
  }

  static Response gap(long index) {
    return Response.newBuilder()
        .setCode(ResultCode.COMPACTED)
        .setMessage(
            "this node started over from a snapshot at index "
                + index
                + ": events before it are gone; re-read the state and resume from index "
                + index)
        .setAppliedIndex(index)
        .build();
  }
}
