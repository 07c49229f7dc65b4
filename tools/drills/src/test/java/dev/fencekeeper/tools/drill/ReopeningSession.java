package dev.fencekeeper.tools.drill;

import dev.fencekeeper.proto.FencekeeperGrpc;
import dev.fencekeeper.proto.KeepAliveAnswer;
import dev.fencekeeper.proto.LeaseEvent;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.SessionKeepAlive;
import dev.fencekeeper.proto.SessionOpen;
import dev.fencekeeper.proto.SessionRequest;
import dev.fencekeeper.proto.SessionResponse;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;

/**
 * A session as a client keeps it through failovers, in miniature: one stream at a time; a
 * keep-alive unanswered within two seconds, or a stream that ends, makes it re-open the same
 * session id on the leader (following NOT_LEADER's leader_address) from the position of the last
 * event it saw. A stream it gives up on is left open, so that a test can see how the node ends it.
 */
final class ReopeningSession implements AutoCloseable {
  private static final Duration ANSWER_WITHIN = Duration.ofSeconds(2);

  /** One Session stream: what arrived on it, and how it ended. */
  static final class Stream implements StreamObserver<SessionResponse> {
    /** Queued when the stream ends, so that a reader waiting for a message learns it at once. */
    private static final SessionResponse END = SessionResponse.getDefaultInstance();

    private final String address;
    private final BlockingQueue<SessionResponse> messages = new LinkedBlockingQueue<>();
    private final CompletableFuture<Throwable> ended = new CompletableFuture<>();
    private StreamObserver<SessionRequest> in;

    Stream(String address) {
      this.address = address;
    }

    String address() {
      return address;
    }

    @Override
    public void onNext(SessionResponse value) {
      messages.add(value);
    }

    @Override
    public void onError(Throwable t) {
      ended.complete(t);
      messages.add(END);
    }

    @Override
    public void onCompleted() {
      ended.complete(null);
      messages.add(END);
    }

    /** The next message, or null when the stream ended or none came by the deadline. */
    SessionResponse poll(long deadlineNanos) throws InterruptedException {
      SessionResponse next =
          messages.poll(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
      return next == END ? null : next;
    }

    /** The last message the stream carries before it ends, waiting up to {@code within}. */
    SessionResponse lastMessage(Duration within) throws Exception {
      ended.get(within.toMillis(), TimeUnit.MILLISECONDS);
      SessionResponse last = null;
      for (SessionResponse m : messages) {
        if (m != END) {
          last = m;
        }
      }
      if (last == null) {
        throw new AssertionError("the stream to " + address + " ended without a message");
      }
      return last;
    }
  }

  private final ClientProtocolFailoverTest test;
  private final String id;
  private Stream current;
  private long afterIndex;
  private int afterSeq;
  private long seq;
  private String lastProblem = "";

  ReopeningSession(ClientProtocolFailoverTest test, String id) {
    this.test = test;
    this.id = id;
  }

  String id() {
    return id;
  }

  Stream current() {
    return current;
  }

  /** Why the last keep-alive or open got no answer, for failure messages. */
  String lastProblem() {
    return lastProblem;
  }

  /**
   * One keep-alive, re-opening the session first if it has no stream: its RENEWED answer, or null
   * when none came (the stream is then given up).
   */
  KeepAliveAnswer keepAlive() throws InterruptedException {
    if (current == null && !open()) {
      return null;
    }
    long mine = ++seq;
    current.in.onNext(
        SessionRequest.newBuilder()
            .setKeepAlive(SessionKeepAlive.newBuilder().setSeq(mine))
            .build());
    long deadline = System.nanoTime() + ANSWER_WITHIN.toNanos();
    while (true) {
      SessionResponse m = current.poll(deadline);
      if (m == null || m.hasError()) {
        lastProblem = current.address() + ": " + (m == null ? "no answer" : m.getError());
        test.forget(current.address());
        current = null;
        return null;
      }
      if (m.hasEvent()) {
        seen(m.getEvent());
      } else if (m.hasKeepAlive() && m.getKeepAlive().getSeq() == mine) {
        KeepAliveAnswer a = m.getKeepAlive();
        if (a.getCode() != ResultCode.RENEWED) {
          lastProblem = current.address() + ": " + a;
          current = null;
          return null;
        }
        return a;
      }
    }
  }

  private void seen(LeaseEvent e) {
    afterIndex = e.getIndex();
    afterSeq = e.getSeq();
  }

  /**
   * Opens the session on the node that leads, trying each candidate and following NOT_LEADER's
   * leader_address (a leader not ready yet names itself); false when none opened it within five
   * seconds.
   */
  private boolean open() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    for (int round = 0; System.nanoTime() < deadline; round++) {
      if (round > 0) {
        Thread.sleep(100);
      }
      for (String address : test.candidates()) {
        SessionResponse first = tryOpen(address);
        if (first != null && first.hasOpened()) {
          return true;
        }
        if (first != null
            && first.hasError()
            && first.getError().getCode() == ResultCode.NOT_LEADER
            && !first.getError().getLeaderAddress().isEmpty()) {
          test.follow(first.getError().getLeaderAddress());
          break;
        }
      }
    }
    return false;
  }

  /** The first message of a new stream to {@code address}, or null when none came in time. */
  private SessionResponse tryOpen(String address) throws InterruptedException {
    Stream s = new Stream(address);
    s.in = FencekeeperGrpc.newStub(test.channel(address)).session(s);
    s.in.onNext(
        SessionRequest.newBuilder()
            .setOpen(
                SessionOpen.newBuilder()
                    .setSessionId(id)
                    .setOwner("failover-test")
                    .setAfterIndex(afterIndex)
                    .setAfterSeq(afterSeq))
            .build());
    SessionResponse first = s.poll(System.nanoTime() + ANSWER_WITHIN.toNanos());
    if (first != null && first.hasOpened()) {
      current = s;
    } else {
      lastProblem = address + ": " + (first == null ? "no answer to open" : first);
      test.forget(address);
      s.in.onError(new IllegalStateException("not opened"));
    }
    return first;
  }

  @Override
  public void close() {
    if (current != null) {
      current.in.onCompleted();
    }
  }
}
