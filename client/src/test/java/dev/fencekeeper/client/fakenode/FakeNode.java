package dev.fencekeeper.client.fakenode;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.BackupRequest;
import dev.fencekeeper.proto.BatchRequest;
import dev.fencekeeper.proto.CancelWaitRequest;
import dev.fencekeeper.proto.FencekeeperGrpc;
import dev.fencekeeper.proto.LeaseQuery;
import dev.fencekeeper.proto.ListRequest;
import dev.fencekeeper.proto.Member;
import dev.fencekeeper.proto.MembersRequest;
import dev.fencekeeper.proto.Membership;
import dev.fencekeeper.proto.NodeInfo;
import dev.fencekeeper.proto.NodeInfoQuery;
import dev.fencekeeper.proto.ReadRequest;
import dev.fencekeeper.proto.ReleaseRequest;
import dev.fencekeeper.proto.RenewRequest;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.RevokeRequest;
import dev.fencekeeper.proto.ServerLimits;
import dev.fencekeeper.proto.SessionRequest;
import dev.fencekeeper.proto.SessionResponse;
import dev.fencekeeper.proto.ValidateRequest;
import dev.fencekeeper.proto.WatchRequest;
import dev.fencekeeper.proto.WriteRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.apache.ratis.thirdparty.com.google.protobuf.Message;
import org.apache.ratis.thirdparty.io.grpc.Server;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyServerBuilder;
import org.apache.ratis.thirdparty.io.grpc.stub.ServerCallStreamObserver;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelOption;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContext;

/**
 * One node of a {@link FakeCluster}: the real {@code fencekeeper.v1} service (fencing.proto) on a
 * loopback port from {@link LocalPorts}, on the same gRPC the client uses, answering from the
 * cluster's in-memory state. A test scripts it into the states a real node reaches only under
 * faults: not the leader (NOT_LEADER naming another node), hung (accepts connections, answers
 * nothing), keep-alives unanswered, session streams broken, stopped (connections refused), or
 * presenting a certificate the client does not trust. It records every call it receives.
 *
 * <p>The admin calls that change the Raft group (AddMember, RemoveMember, TransferLeadership,
 * JoinGroup, Snapshot, Backup) are not the client logic these tests are about; a fake node answers
 * them UNIMPLEMENTED, as gRPC does for any call a server does not serve.
 */
public final class FakeNode extends FencekeeperGrpc.FencekeeperImplBase implements AutoCloseable {
  /** One call this node received: its method and its request. */
  public record Call(String method, Message request) {}

  private final FakeCluster cluster;
  private final String id;
  private final int port;
  private final SslContext tls;
  private final List<Call> calls = new CopyOnWriteArrayList<>();
  // Calls a hung node holds open without answering: answered by nobody, cancelled when it stops.
  private final Set<StreamObserver<?>> unanswered = ConcurrentHashMap.newKeySet();
  private final Set<StreamObserver<SessionResponse>> sessionStreams = ConcurrentHashMap.newKeySet();
  private volatile Server server;
  private volatile String leaderHint; // null: this node leads
  private volatile boolean hung;
  private volatile boolean keepAlivesDropped;
  private volatile boolean cutOff;

  private FakeNode(FakeCluster cluster, String id, SslContext tls) {
    this.cluster = cluster;
    this.id = id;
    this.tls = tls;
    this.port = LocalPorts.freePort();
  }

  /** A node of {@code cluster} listening on a fresh loopback port. */
  public static FakeNode start(FakeCluster cluster, String id) {
    warmUp();
    FakeNode node = new FakeNode(cluster, id, null);
    node.resume();
    return node;
  }

  /** A node that speaks TLS only, presenting what {@code tls} holds. */
  public static FakeNode startTls(FakeCluster cluster, String id, SslContext tls) {
    warmUp();
    FakeNode node = new FakeNode(cluster, id, tls);
    node.resume();
    return node;
  }

  private static final AtomicBoolean WARM = new AtomicBoolean();

  /**
   * Once per JVM, before the first node a test uses: a lease taken, written and released through a
   * client against a node of its own. The first gRPC call of a JVM loads and initializes Netty,
   * gRPC and protobuf, seconds on a loaded machine, and none of the bounds under test is about
   * that.
   */
  private static void warmUp() {
    if (WARM.getAndSet(true)) {
      return;
    }
    try (FakeCluster cluster = new FakeCluster();
        FakeNode node = new FakeNode(cluster, "warm-up", null)) {
      node.resume();
      try (FencingClient client =
              FencingClient.builder()
                  .endpoints(node.address())
                  .requestTimeout(Duration.ofSeconds(10))
                  .build();
          Lease lease = client.acquire("warm-up", Duration.ofSeconds(10))) {
        lease.write("k", "v");
      }
    }
  }

  /** {@code host:port} of this node's client port. */
  public String address() {
    return "127.0.0.1:" + port;
  }

  // -----------------------------------------------------------------------------------------------
  // Scripting.

  /**
   * From now on leader-only calls are answered NOT_LEADER naming {@code leaderAddress} (null: this
   * node leads again), and sessions opened here are ended the same way.
   */
  public void notLeader(String leaderAddress) {
    this.leaderHint = leaderAddress;
  }

  /** While true, the node accepts connections and calls and answers none of them. */
  public void hang(boolean hang) {
    this.hung = hang;
  }

  /**
   * While true, the node is cut off from the leader but still connected: its watch streams stay
   * open and deliver nothing new (it applies nothing), and end only when their {@code timeout_ms}
   * runs out, as a real node's do.
   */
  public void cutOff(boolean cutOff) {
    this.cutOff = cutOff;
  }

  /** While true, keep-alives reach the node and are neither applied nor answered. */
  public void dropKeepAlives(boolean drop) {
    this.keepAlivesDropped = drop;
  }

  /**
   * This node stops leading, as at a leadership transfer: from now on it answers as {@link
   * #notLeader} does, and each session stream open on it ends with NOT_LEADER naming {@code
   * leaderAddress}.
   */
  public void stepDown(String leaderAddress) {
    notLeader(leaderAddress);
    for (StreamObserver<SessionResponse> s : List.copyOf(sessionStreams)) {
      sessionStreams.remove(s);
      cluster.sessionEnded(s);
      cluster.send(
          s, SessionResponse.newBuilder().setError(notLeaderAnswer(leaderAddress)).build());
      cluster.complete(s);
    }
  }

  /** Breaks every session stream open on this node, as a node that dies or loses its network. */
  public void breakSessions() {
    for (StreamObserver<SessionResponse> s : List.copyOf(sessionStreams)) {
      sessionStreams.remove(s);
      cluster.sessionEnded(s);
      cluster.fail(
          s, Status.UNAVAILABLE.withDescription("stream broken by the test").asException());
    }
  }

  /** Stops listening: every stream and call breaks, and connections are refused until resumed. */
  public void stop() {
    Server s = server;
    server = null;
    if (s == null) {
      return;
    }
    for (StreamObserver<SessionResponse> stream : List.copyOf(sessionStreams)) {
      sessionStreams.remove(stream);
      cluster.sessionEnded(stream);
    }
    s.shutdownNow();
    try {
      s.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    unanswered.clear();
  }

  /** Listens again on the same port (after {@link #stop()}), with the cluster's state intact. */
  public void resume() {
    if (server != null) {
      return;
    }
    NettyServerBuilder b =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
            // Bound again at once after a stop, while its old connections linger in TIME_WAIT.
            .withOption(ChannelOption.SO_REUSEADDR, true)
            .addService(this);
    if (tls != null) {
      b.sslContext(tls);
    }
    try {
      server = b.build().start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot listen on " + address(), e);
    }
  }

  @Override
  public void close() {
    stop();
  }

  /** Every call received so far, in arrival order. */
  public List<Call> calls() {
    return List.copyOf(calls);
  }

  /** The requests received by {@code method} (the RPC's name, e.g. "Acquire"). */
  public List<Message> calls(String method) {
    List<Message> out = new ArrayList<>();
    for (Call c : calls) {
      if (c.method().equals(method)) {
        out.add(c.request());
      }
    }
    return out;
  }

  // -----------------------------------------------------------------------------------------------
  // The service.

  /**
   * Records the call, then answers it unless the node hangs; a leader-only call on a node that does
   * not lead is answered NOT_LEADER, as a follower does before anything reaches the log.
   */
  private void unary(
      String method,
      Message request,
      boolean leaderOnly,
      StreamObserver<Response> out,
      Supplier<Response> answer) {
    calls.add(new Call(method, request));
    if (hung) {
      unanswered.add(out);
      return;
    }
    String hint = leaderHint;
    if (leaderOnly && hint != null) {
      cluster.answer(out, notLeaderAnswer(hint));
      return;
    }
    Response r = answer.get();
    if (r != null) {
      cluster.answer(out, r);
    }
  }

  private static Response notLeaderAnswer(String hint) {
    return Response.newBuilder()
        .setCode(ResultCode.NOT_LEADER)
        .setLeaderAddress(hint)
        .setMessage("this node is not the leader")
        .build();
  }

  @Override
  public void acquire(AcquireRequest request, StreamObserver<Response> out) {
    if (request.getWaitMs() > 0) {
      // Set now, before any answer: the caller giving up the call gives up the place in line.
      ((ServerCallStreamObserver<Response>) out)
          .setOnCancelHandler(() -> cluster.acquireCallCancelled(out));
    }
    unary("Acquire", request, true, out, () -> cluster.acquire(request, out));
  }

  @Override
  public void cancelWait(CancelWaitRequest request, StreamObserver<Response> out) {
    unary("CancelWait", request, true, out, () -> cluster.cancelWait(request));
  }

  @Override
  public void renew(RenewRequest request, StreamObserver<Response> out) {
    unary("Renew", request, true, out, () -> cluster.renew(request));
  }

  @Override
  public void release(ReleaseRequest request, StreamObserver<Response> out) {
    unary("Release", request, true, out, () -> cluster.release(request));
  }

  @Override
  public void revoke(RevokeRequest request, StreamObserver<Response> out) {
    unary("Revoke", request, true, out, () -> cluster.revoke(request));
  }

  @Override
  public void write(WriteRequest request, StreamObserver<Response> out) {
    unary("Write", request, true, out, () -> cluster.write(request));
  }

  @Override
  public void batch(BatchRequest request, StreamObserver<Response> out) {
    unary(
        "Batch",
        request,
        true,
        out,
        () -> {
          Response.Builder b = Response.newBuilder().setCode(ResultCode.BATCH_ANSWERED);
          for (Request r : request.getRequestsList()) {
            b.addBatch(inBatch(r));
          }
          return b.build();
        });
  }

  /** One command of a batch, answered as if sent alone; a queued acquire is answered WAITING. */
  private Response inBatch(Request r) {
    return switch (r.getCommandCase()) {
      case ACQUIRE -> cluster.acquire(r.getAcquire(), null);
      case RENEW -> cluster.renew(r.getRenew());
      case RELEASE -> cluster.release(r.getRelease());
      case WRITE -> cluster.write(r.getWrite());
      case CANCEL_WAIT -> cluster.cancelWait(r.getCancelWait());
      default -> FakeCluster.invalid("requests: " + r.getCommandCase() + " may not be batched");
    };
  }

  @Override
  public void read(ReadRequest request, StreamObserver<Response> out) {
    unary(
        "Read",
        request,
        linearizable(request.getConsistencyValue()),
        out,
        () -> cluster.read(request));
  }

  @Override
  public void validate(ValidateRequest request, StreamObserver<Response> out) {
    unary(
        "Validate",
        request,
        linearizable(request.getConsistencyValue()),
        out,
        () -> cluster.validate(request));
  }

  @Override
  public void getLease(LeaseQuery request, StreamObserver<Response> out) {
    unary(
        "GetLease",
        request,
        linearizable(request.getConsistencyValue()),
        out,
        () -> cluster.lease(request));
  }

  @Override
  public void list(ListRequest request, StreamObserver<Response> out) {
    unary(
        "List",
        request,
        linearizable(request.getConsistencyValue()),
        out,
        () -> cluster.list(request));
  }

  private static boolean linearizable(int consistency) {
    return consistency == 0;
  }

  @Override
  public void nodeStatus(NodeInfoQuery request, StreamObserver<Response> out) {
    unary(
        "NodeStatus",
        request,
        false,
        out,
        () ->
            Response.newBuilder()
                .setCode(ResultCode.FOUND)
                .setNode(
                    NodeInfo.newBuilder()
                        .setId(id)
                        .setRole(leaderHint == null ? "LEADER" : "FOLLOWER")
                        .setLastAppliedIndex(cluster.appliedIndex())
                        .setCommitIndex(cluster.appliedIndex())
                        .setClientAddress(address())
                        .setLimits(
                            ServerLimits.newBuilder()
                                .setMaxResourceBytes(256)
                                .setMaxKeyBytes(512)
                                .setMaxOwnerBytes(256)
                                .setMaxValueBytes(1 << 20)
                                .setMaxRequestsPerBatch(1000)
                                .setMinTtlMs(1)
                                .setMaxTtlMs(86_400_000)
                                .setMaxMessageBytes(4 << 20)))
                .build());
  }

  @Override
  public void members(MembersRequest request, StreamObserver<Response> out) {
    unary(
        "Members",
        request,
        false,
        out,
        () ->
            Response.newBuilder()
                .setCode(ResultCode.FOUND)
                .setMembership(
                    Membership.newBuilder()
                        .addMembers(Member.newBuilder().setId(id).setClientAddress(address()))
                        .setLeaderId(leaderHint == null ? id : "")
                        .setReportedBy(id))
                .build());
  }

  @Override
  public void backup(BackupRequest request, StreamObserver<Response> out) {
    calls.add(new Call("Backup", request));
    out.onError(Status.UNIMPLEMENTED.withDescription("a fake node keeps no backup").asException());
  }

  @Override
  public void watch(WatchRequest request, StreamObserver<Response> out) {
    calls.add(new Call("Watch", request));
    if (hung) {
      unanswered.add(out);
      return;
    }
    StreamObserver<Response> fed =
        new StreamObserver<>() {
          @Override
          public void onNext(Response message) {
            if (!cutOff) {
              out.onNext(message);
            }
          }

          @Override
          public void onError(Throwable t) {
            out.onError(t);
          }

          @Override
          public void onCompleted() {
            out.onCompleted();
          }
        };
    ((ServerCallStreamObserver<Response>) out)
        .setOnCancelHandler(() -> cluster.watchCancelled(fed));
    cluster.watch(request, fed);
  }

  @Override
  public StreamObserver<SessionRequest> session(StreamObserver<SessionResponse> out) {
    ((ServerCallStreamObserver<SessionResponse>) out)
        .setOnCancelHandler(
            () -> {
              sessionStreams.remove(out);
              cluster.sessionEnded(out);
            });
    return new StreamObserver<>() {
      private String sessionId;

      @Override
      public void onNext(SessionRequest message) {
        calls.add(new Call(message.hasOpen() ? "SessionOpen" : "KeepAlive", message));
        if (hung) {
          return;
        }
        if (message.hasOpen()) {
          String hint = leaderHint;
          if (hint != null) {
            cluster.send(out, SessionResponse.newBuilder().setError(notLeaderAnswer(hint)).build());
            cluster.complete(out);
            return;
          }
          sessionId = message.getOpen().getSessionId();
          sessionStreams.add(out);
          cluster.sessionOpened(
              sessionId, message.getOpen().getAfterIndex(), message.getOpen().getAfterSeq(), out);
        } else if (message.hasKeepAlive() && sessionId != null && !keepAlivesDropped) {
          cluster.keepAlive(sessionId, message.getKeepAlive(), out);
        }
      }

      @Override
      public void onError(Throwable t) {
        sessionStreams.remove(out);
        cluster.sessionEnded(out);
      }

      @Override
      public void onCompleted() {
        sessionStreams.remove(out);
        cluster.sessionEnded(out);
        cluster.complete(out);
      }
    };
  }
}
