package dev.fencekeeper.clientport;

import dev.fencekeeper.config.StreamLimits;
import dev.fencekeeper.core.Code;
import dev.fencekeeper.core.Outcome;
import dev.fencekeeper.core.SessionIds;
import dev.fencekeeper.proto.KeepAliveAnswer;
import dev.fencekeeper.proto.LeaseEvent;
import dev.fencekeeper.proto.RenewSessionRequest;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.SessionKeepAlive;
import dev.fencekeeper.proto.SessionOpen;
import dev.fencekeeper.proto.SessionOpened;
import dev.fencekeeper.proto.SessionRequest;
import dev.fencekeeper.proto.SessionResponse;
import dev.fencekeeper.statemachine.EventFeed;
import dev.fencekeeper.statemachine.WireCodec;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.thirdparty.io.grpc.stub.ServerCallStreamObserver;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;

/**
 * One client's Session stream on the leader (docs/protocol.md, Sessions). The first message opens
 * the session: its id, and the position after which the client has not seen its events. From then
 * on the stream carries, in commit order, every lease event naming the session (grants, also of its
 * queued acquires, and every end), and answers each keep-alive after one {@code RenewSession} entry
 * renewed the session's live leases.
 *
 * <p>The promise a client builds on: every event of the session up to a keep-alive answer's {@code
 * applied_index} was sent before that answer. It holds because events are queued on the stream by
 * the apply thread as each entry is applied ({@link EventHub}), before the entry's answers exist.
 *
 * <p>One renewal per session is in flight at a time; keep-alives that arrive meanwhile are answered
 * together by the next one, so a client that floods keep-alives costs one entry per round, not one
 * per message.
 *
 * <p>An open that reaches a node about to lead is held for up to {@link #HOLD_MS}, one that reaches
 * a node that knows no leader (an election is under way) for up to {@link #NO_LEADER_HOLD_MS},
 * instead of refused: it is opened the moment this node is ready to lead, or refused with
 * NOT_LEADER naming the new leader the moment this node follows one. After a leader dies its
 * clients' sessions reach the new leader as soon as it is ready, instead of asking each node in
 * turn until one is. Keep-alives sent right behind the open wait with it.
 */
final class SessionCall implements StreamObserver<SessionRequest> {
  /** What a session needs of its node. */
  interface Node {
    boolean leaderReady();

    /** This node follows a leader other than itself. */
    boolean followsAnother();

    /** This node was elected leader and is not ready yet. */
    boolean elected();

    Response notLeader();

    CompletableFuture<CommandQueue.Answer> submit(Request stamped);
  }

  /** The hub's receiver for this session's events. */
  record Events(SessionCall call) implements EventHub.Receiver {
    @Override
    public void onEvents(long index, List<LeaseEvent> events) {
      call.events(events);
    }

    @Override
    public void onGap(long index) {
      call.end(Streams.gap(index));
    }
  }

  /**
   * How long an open waits for this node to lead or to learn who does: past an election and the new
   * leader's first entry, which on a loaded two-core machine took up to two seconds together (a
   * follower learns the new leader only from that entry). A client's own open timeout usually ends
   * the wait sooner.
   */
  static final long HOLD_MS = 2000;

  /**
   * How long an open waits at a node that knows no leader and is not elected: an election under
   * way, or a node cut off from the majority, which would hold every open in vain; a client that
   * moves on sooner finds the leader elsewhere.
   */
  static final long NO_LEADER_HOLD_MS = 500;

  private static final long HOLD_POLL_MS = 10;

  private final Node node;
  private final EventFeed feed;
  private final EventHub hub;
  private final IdentityCounts sessions;
  private final StreamLimits limits;
  private final String caller;
  private final OutboundStream<SessionResponse> stream;
  private final Events events = new Events(this);
  private final ScheduledExecutorService timer;
  // Guarded by this.
  private String sessionId;
  private boolean held; // an open waits for this node to lead or to learn who does
  private boolean counted;
  private boolean renewing;
  private final List<Long> waitingSeqs = new ArrayList<>();
  private List<Long> exceptTokens = List.of();

  SessionCall(
      Node node,
      EventFeed feed,
      EventHub hub,
      IdentityCounts sessions,
      StreamLimits limits,
      String caller,
      ServerCallStreamObserver<SessionResponse> out,
      Executor executor,
      ScheduledExecutorService timer) {
    this.node = node;
    this.feed = feed;
    this.hub = hub;
    this.sessions = sessions;
    this.limits = limits;
    this.caller = caller;
    this.timer = timer;
    this.stream =
        new OutboundStream<>(out, executor, timer, limits.maxBufferedMessages(), this::ended);
  }

  @Override
  public void onNext(SessionRequest request) {
    switch (request.getKindCase()) {
      case OPEN -> open(request.getOpen());
      case KEEP_ALIVE -> keepAlive(request.getKeepAlive());
      default -> end(WireCodec.invalid("a session message must be open or keep_alive"));
    }
  }

  @Override
  public void onError(Throwable t) {
    // The client went away: the stream's cancel handler ends it.
  }

  @Override
  public void onCompleted() {
    stream.finish(null);
  }

  private void open(SessionOpen open) {
    synchronized (this) {
      if (sessionId != null || held) {
        end(WireCodec.invalid("the session is already open on this stream"));
        return;
      }
    }
    if (!open.getGroup().isEmpty()) {
      end(FencekeeperService.invalidGroup(open.getGroup()));
      return;
    }
    String problem = SessionIds.problem(open.getSessionId());
    if (problem != null) {
      end(WireCodec.invalid(problem));
      return;
    }
    admit(open, System.nanoTime());
  }

  /**
   * Opens the session here if this node is the ready leader; refuses it if another node leads or
   * the hold is over; else looks again in {@link #HOLD_POLL_MS}. Leadership is read from this
   * node's own Raft state, so a look costs no I/O.
   */
  private void admit(SessionOpen open, long arrivedNanos) {
    if (stream.isEnded()) {
      return;
    }
    boolean ready = node.leaderReady();
    long heldMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - arrivedNanos);
    if (!ready
        && (node.followsAnother() || heldMs >= (node.elected() ? HOLD_MS : NO_LEADER_HOLD_MS))) {
      refuseHeld();
      return;
    }
    if (!ready) {
      synchronized (this) {
        held = true;
      }
      try {
        // On the timer's thread, not the port's executor: a new leader's executor is busy with the
        // calls every client retries at once, and a look, or the open once ready, must not queue
        // behind them (an open not held runs on the call's own thread the same way).
        timer.schedule(() -> admit(open, arrivedNanos), HOLD_POLL_MS, TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException stopping) {
        refuseHeld();
      }
      return;
    }
    if (!sessions.tryOpen(caller, limits.maxSessionsPerClient())) {
      end(
          Streams.overloaded(
              "identity '"
                  + caller
                  + "' already has "
                  + limits.maxSessionsPerClient()
                  + " sessions open on this node (limits.sessions-per-client.max)"));
      return;
    }
    String id = open.getSessionId();
    synchronized (this) {
      sessionId = id;
      counted = true;
    }
    boolean fromNow = open.getAfterIndex() == 0 && open.getAfterSeq() == 0;
    feed.replay(
        open.getAfterIndex(),
        open.getAfterSeq(),
        fromNow ? e -> false : e -> e.getSessionId().equals(id),
        replay -> {
          if (!fromNow && replay.compacted()) {
            end(Streams.compacted(replay));
            return;
          }
          // Registered before anything is sent, so that a stream refused for another identity
          // sees none of the session's events; under the feed's lock, so that no live event
          // overtakes the replay.
          EventHub.Receiver before =
              hub.addSession(
                  id, events, held -> held instanceof Events e && e.call().caller.equals(caller));
          if (before instanceof Events other && other.call() != this) {
            if (hub.session(id) != events) {
              end(
                  WireCodec.toResponse(
                      Outcome.of(Code.PERMISSION_DENIED)
                          .message(
                              "session "
                                  + id
                                  + " is open on this node for another identity; a session id"
                                  + " belongs to the identity that opened it")
                          .build()));
              return;
            }
            other
                .call()
                .end(
                    Streams.overloaded(
                        "another stream of session " + id + " was opened; this one is closed"));
          }
          offer(
              SessionResponse.newBuilder()
                  .setOpened(
                      SessionOpened.newBuilder()
                          .setSessionId(id)
                          .setAppliedIndex(replay.appliedIndex()))
                  .build());
          events(replay.events());
        });
    if (stream.isEnded()) {
      hub.removeSession(id, events);
    }
    // After the replay, outside the feed's lock: a renewal is a proposal to Raft.
    renewHeldKeepAlives();
  }

  /** NOT_LEADER, naming the leader when this node knows it; keep-alives held are dropped. */
  private void refuseHeld() {
    synchronized (this) {
      held = false;
      waitingSeqs.clear();
    }
    end(node.notLeader());
  }

  /**
   * Renews for the keep-alives that arrived while the open was held, once {@code opened} is on the
   * stream: until then a held open's keep-alives wait, so that no answer overtakes it.
   */
  private void renewHeldKeepAlives() {
    synchronized (this) {
      held = false;
      if (renewing || waitingSeqs.isEmpty() || stream.isEnded()) {
        return;
      }
      renewing = true;
    }
    renew();
  }

  private void keepAlive(SessionKeepAlive keepAlive) {
    synchronized (this) {
      if (sessionId == null && !held) {
        end(WireCodec.invalid("open the session before its first keep_alive"));
        return;
      }
      if (waitingSeqs.size() >= limits.maxBufferedMessages()) {
        stream.cutOff(
            SessionResponse.newBuilder()
                .setError(
                    Streams.overloaded(
                        "more than "
                            + limits.maxBufferedMessages()
                            + " keep-alives are waiting for one renewal; the stream is closed"))
                .build());
        return;
      }
      waitingSeqs.add(keepAlive.getSeq());
      exceptTokens = keepAlive.getExceptTokensList();
      if (renewing || held) {
        return;
      }
      renewing = true;
    }
    renew();
  }

  /** Proposes one renewal for every keep-alive waiting, and answers them all with it. */
  private void renew() {
    List<Long> seqs;
    Request renewal;
    synchronized (this) {
      seqs = List.copyOf(waitingSeqs);
      waitingSeqs.clear();
      renewal =
          Request.newBuilder()
              .setRenewSession(
                  RenewSessionRequest.newBuilder()
                      .setSessionId(sessionId)
                      .addAllExceptTokens(exceptTokens))
              .setCaller(caller)
              .build();
    }
    node.submit(renewal).thenAccept(answer -> renewed(seqs, answer));
  }

  private void renewed(List<Long> seqs, CommandQueue.Answer answer) {
    Response r = answer.response();
    for (long seq : seqs) {
      offer(
          SessionResponse.newBuilder()
              .setKeepAlive(
                  KeepAliveAnswer.newBuilder()
                      .setSeq(seq)
                      .setCode(r.getCode())
                      .setRenewed(r.getRenewed())
                      .setAppliedIndex(answer.logIndex())
                      .setNowMs(r.getNowMs()))
              .build());
    }
    if (r.getCode() == ResultCode.NOT_LEADER || r.getCode() == ResultCode.UNAVAILABLE) {
      end(r);
      return;
    }
    boolean again;
    synchronized (this) {
      again = !waitingSeqs.isEmpty() && !stream.isEnded();
      renewing = again;
    }
    if (again) {
      renew();
    }
  }

  private void events(List<LeaseEvent> list) {
    for (LeaseEvent e : list) {
      offer(SessionResponse.newBuilder().setEvent(e).build());
    }
  }

  private void offer(SessionResponse message) {
    stream.offer(message, SessionResponse.newBuilder().setError(unread()).build());
  }

  private Response unread() {
    return Streams.overloaded(
        "the client did not read its session stream: more than "
            + limits.maxBufferedMessages()
            + " messages were left unread (limits.stream-buffer.max); the stream is closed");
  }

  /** Ends the stream with {@code error} as its last message. */
  void end(Response error) {
    stream.finish(SessionResponse.newBuilder().setError(error).build());
  }

  /** This node stopped leading: the client re-opens the session on the new leader. */
  void endNotLeader() {
    end(node.notLeader());
  }

  private void ended() {
    String id;
    boolean wasCounted;
    synchronized (this) {
      id = sessionId;
      wasCounted = counted;
      counted = false;
    }
    if (id != null) {
      hub.removeSession(id, events);
    }
    if (wasCounted) {
      sessions.close(caller);
    }
  }
}
