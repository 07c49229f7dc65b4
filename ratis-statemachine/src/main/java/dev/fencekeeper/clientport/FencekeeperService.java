package dev.fencekeeper.clientport;

import dev.fencekeeper.client.wire.RequestKinds;
import dev.fencekeeper.config.Limits;
import dev.fencekeeper.config.Security;
import dev.fencekeeper.core.Command;
import dev.fencekeeper.core.Outcome;
import dev.fencekeeper.metrics.StateMachineMetrics;
import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.AddMemberRequest;
import dev.fencekeeper.proto.BackupRequest;
import dev.fencekeeper.proto.BatchRequest;
import dev.fencekeeper.proto.CancelWaitRequest;
import dev.fencekeeper.proto.Consistency;
import dev.fencekeeper.proto.FencekeeperGrpc;
import dev.fencekeeper.proto.JoinGroupRequest;
import dev.fencekeeper.proto.LeaseQuery;
import dev.fencekeeper.proto.ListRequest;
import dev.fencekeeper.proto.MembersRequest;
import dev.fencekeeper.proto.NodeInfoQuery;
import dev.fencekeeper.proto.ReadRequest;
import dev.fencekeeper.proto.ReleaseRequest;
import dev.fencekeeper.proto.RemoveMemberRequest;
import dev.fencekeeper.proto.RenewRequest;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.RevokeRequest;
import dev.fencekeeper.proto.SessionRequest;
import dev.fencekeeper.proto.SessionResponse;
import dev.fencekeeper.proto.SnapshotRequest;
import dev.fencekeeper.proto.TransferLeadershipRequest;
import dev.fencekeeper.proto.ValidateRequest;
import dev.fencekeeper.proto.WatchRequest;
import dev.fencekeeper.proto.WriteRequest;
import dev.fencekeeper.statemachine.FencingStateMachine;
import dev.fencekeeper.statemachine.WireCodec;
import java.util.concurrent.CompletableFuture;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client protocol's calls ({@code fencekeeper.v1.Fencekeeper}, docs/protocol.md) on one node.
 *
 * <p>Every request is stamped with its caller (the client certificate's CN, from {@link
 * CallerIdentity}) before anything reads it, overwriting whatever the client put in {@code caller}.
 * Commands are answered by the leader through its {@link CommandQueue}; a follower answers
 * NOT_LEADER naming the leader. Linearizable queries are answered by the leader once a barrier
 * entry it proposed after them is applied ({@link ReadBarrier}); stale ones by whichever node
 * receives them. What is refused before the log (a group this node does not serve, a request that
 * is no command, a revoke by a non-admin, too many pending commands or reads) is an ordinary {@link
 * Response} with its result code, never a gRPC error.
 *
 * <p>Handlers run on the transport's threads and never block: everything that waits (Raft, a read
 * barrier, a queued acquire) completes a future that answers the call.
 */
public final class FencekeeperService extends FencekeeperGrpc.FencekeeperImplBase {
  private static final Logger LOG = LoggerFactory.getLogger(FencekeeperService.class);

  private final FencingStateMachine stateMachine;
  private final LocalRaft raft;
  private final ReadBarrier barrier;
  private final Redirects redirects;
  private final CommandQueue commands;
  private final Security security;
  private final Limits limits;
  private final StateMachineMetrics metrics;
  private final ReadSlots reads;
  private final WaitingAcquires waiting;
  private final Streams streams;
  private final AdminCalls admin;

  FencekeeperService(
      FencingStateMachine stateMachine,
      LocalRaft raft,
      ReadBarrier barrier,
      Redirects redirects,
      CommandQueue commands,
      Security security,
      Limits limits,
      StateMachineMetrics metrics,
      ReadSlots reads,
      WaitingAcquires waiting,
      Streams streams,
      AdminCalls admin) {
    this.stateMachine = stateMachine;
    this.raft = raft;
    this.barrier = barrier;
    this.redirects = redirects;
    this.commands = commands;
    this.security = security;
    this.limits = limits;
    this.metrics = metrics;
    this.reads = reads;
    this.waiting = waiting;
    this.streams = streams;
    this.admin = admin;
  }

  private static String caller() {
    return CallerIdentity.current();
  }

  // ---------------------------------------------------------------------------------------------
  // Commands

  @Override
  public void acquire(AcquireRequest request, StreamObserver<Response> out) {
    if (refusedGroup(request.getGroup(), out)) {
      return;
    }
    Request stamped = Request.newBuilder().setAcquire(request).setCaller(caller()).build();
    if (request.getWaitMs() > 0) {
      waiting.acquire(stamped, out);
      return;
    }
    command(stamped, out);
  }

  @Override
  public void cancelWait(CancelWaitRequest request, StreamObserver<Response> out) {
    if (!refusedGroup(request.getGroup(), out)) {
      command(Request.newBuilder().setCancelWait(request).setCaller(caller()).build(), out);
    }
  }

  @Override
  public void renew(RenewRequest request, StreamObserver<Response> out) {
    if (!refusedGroup(request.getGroup(), out)) {
      command(Request.newBuilder().setRenew(request).setCaller(caller()).build(), out);
    }
  }

  @Override
  public void release(ReleaseRequest request, StreamObserver<Response> out) {
    if (!refusedGroup(request.getGroup(), out)) {
      command(Request.newBuilder().setRelease(request).setCaller(caller()).build(), out);
    }
  }

  @Override
  public void revoke(RevokeRequest request, StreamObserver<Response> out) {
    if (!refusedGroup(request.getGroup(), out)) {
      command(Request.newBuilder().setRevoke(request).setCaller(caller()).build(), out);
    }
  }

  @Override
  public void write(WriteRequest request, StreamObserver<Response> out) {
    if (!refusedGroup(request.getGroup(), out)) {
      command(Request.newBuilder().setWrite(request).setCaller(caller()).build(), out);
    }
  }

  @Override
  public void batch(BatchRequest request, StreamObserver<Response> out) {
    if (refusedGroup(request.getGroup(), out)) {
      return;
    }
    String caller = caller();
    BatchRequest.Builder stamped = BatchRequest.newBuilder();
    for (Request inner : request.getRequestsList()) {
      stamped.addRequests(inner.toBuilder().setCaller(caller).clearReadOverloaded());
    }
    command(Request.newBuilder().setBatch(stamped).setCaller(caller).build(), out);
  }

  /** Answers {@code stamped} (a command with its caller) through the leader's queue. */
  private void command(Request stamped, StreamObserver<Response> out) {
    submit(stamped).thenAccept(answer -> reply(out, answer.response()));
  }

  /**
   * The answer to a command: refused here (not leader, not a command, a revoke by a non-admin), or
   * queued on the leader and answered once applied.
   */
  CompletableFuture<CommandQueue.Answer> submit(Request stamped) {
    Response refused = admit(stamped);
    if (refused != null) {
      return CompletableFuture.completedFuture(new CommandQueue.Answer(refused, 0));
    }
    CompletableFuture<CommandQueue.Answer> answer = commands.submit(stamped);
    if (answer.isDone() && answer.join().response().getCode() == ResultCode.OVERLOADED) {
      metrics.refusedEarly(
          WireCodec.toCommand(stamped, true),
          Outcome.of(dev.fencekeeper.core.Code.OVERLOADED)
              .message(answer.join().response().getMessage())
              .build());
    }
    return answer;
  }

  /** Why {@code stamped} is answered before the log, or null when it may be queued. */
  private Response admit(Request stamped) {
    if (!raft.leadership().leaderReady()) {
      return redirects.notLeader();
    }
    Command command = WireCodec.toCommand(stamped, true);
    String problem =
        command == null
            ? WireCodec.whyNoCommand(stamped)
            : command instanceof Command.Batch b ? batchProblem(b) : null;
    if (problem != null) {
      Outcome invalid = Outcome.invalid(problem);
      metrics.refusedEarly(null, invalid);
      return WireCodec.toResponse(invalid);
    }
    if (command instanceof Command.Revoke && !security.isAdmin(stamped.getCaller())) {
      Outcome denied =
          Outcome.of(dev.fencekeeper.core.Code.PERMISSION_DENIED)
              .message(
                  "identity '"
                      + stamped.getCaller()
                      + "' may not revoke: it is not in authz.admins")
              .build();
      metrics.refusedEarly(command, denied);
      return WireCodec.toResponse(denied);
    }
    return null;
  }

  /**
   * Why a client's batch cannot be applied as a whole (the core's rule, {@code Validation.batch}),
   * found before it costs a log entry; null when it may be.
   */
  private String batchProblem(Command.Batch batch) {
    int size = batch.commands().size();
    if (size == 0) {
      return "batch: at least one request is required";
    }
    if (size > limits.maxRequestsPerBatch()) {
      return "batch: " + size + " requests exceed the limit of " + limits.maxRequestsPerBatch();
    }
    for (int i = 0; i < size; i++) {
      if (!Command.Batch.isBatchable(batch.commands().get(i))) {
        return "batch: request "
            + (i + 1)
            + " may not be batched; only "
            + RequestKinds.BATCHABLE
            + " may be";
      }
    }
    return null;
  }

  // ---------------------------------------------------------------------------------------------
  // Queries

  @Override
  public void read(ReadRequest request, StreamObserver<Response> out) {
    if (!refusedGroup(request.getGroup(), out)) {
      query(
          Request.newBuilder().setRead(request).setCaller(caller()).build(),
          request.getConsistency(),
          out);
    }
  }

  @Override
  public void validate(ValidateRequest request, StreamObserver<Response> out) {
    if (!refusedGroup(request.getGroup(), out)) {
      query(
          Request.newBuilder().setValidate(request).setCaller(caller()).build(),
          request.getConsistency(),
          out);
    }
  }

  @Override
  public void getLease(LeaseQuery request, StreamObserver<Response> out) {
    if (!refusedGroup(request.getGroup(), out)) {
      query(
          Request.newBuilder().setLease(request).setCaller(caller()).build(),
          request.getConsistency(),
          out);
    }
  }

  @Override
  public void list(ListRequest request, StreamObserver<Response> out) {
    if (!refusedGroup(request.getGroup(), out)) {
      query(
          Request.newBuilder().setList(request).setCaller(caller()).build(),
          request.getConsistency(),
          out);
    }
  }

  @Override
  public void nodeStatus(NodeInfoQuery request, StreamObserver<Response> out) {
    query(
        Request.newBuilder().setNodeInfo(request).setCaller(caller()).build(),
        Consistency.CONSISTENCY_STALE,
        out);
  }

  /**
   * The first call freezes the state on the leader once a read barrier confirmed it, so the backup
   * holds every write acknowledged before the call (a follower may not have applied them yet); the
   * chunks of a frozen backup are served by the node that froze it, which holds the copy.
   */
  @Override
  public void backup(BackupRequest request, StreamObserver<Response> out) {
    if (!refusedGroup(request.getGroup(), out)) {
      query(
          Request.newBuilder().setBackup(request).setCaller(caller()).build(),
          request.getBackupId().isEmpty()
              ? Consistency.CONSISTENCY_LINEARIZABLE
              : Consistency.CONSISTENCY_STALE,
          out);
    }
  }

  /**
   * Answers a query: a stale one at once from this node's state, a linearizable one on the leader
   * once a barrier entry it proposed after the query arrived is applied here ({@link ReadBarrier}).
   * Each holds one of the node's read slots until answered.
   */
  private void query(Request stamped, Consistency consistency, StreamObserver<Response> out) {
    boolean linearizable = consistency != Consistency.CONSISTENCY_STALE;
    if (linearizable && !raft.leadership().leaderReady()) {
      reply(out, redirects.notLeader());
      return;
    }
    if (!reads.tryTake()) {
      metrics.readOverloaded(stamped.getCaller());
      // The state machine words the refusal, as it words every answer to a read.
      stateMachine
          .answerQuery(stamped.toBuilder().setReadOverloaded(true).build())
          .thenAccept(r -> reply(out, r));
      return;
    }
    CompletableFuture<Response> answer;
    if (linearizable) {
      answer =
          barrier
              .pass()
              .thenCompose(
                  passed ->
                      passed
                          ? stateMachine.answerQuery(stamped)
                          : CompletableFuture.completedFuture(notConfirmed()));
    } else {
      answer = stateMachine.answerQuery(stamped);
    }
    answer.whenComplete(
        (r, e) -> {
          reads.release();
          reply(out, e == null ? r : WireCodec.internal("query failed: " + e));
        });
  }

  private Response notConfirmed() {
    return redirects
        .redirect(ResultCode.NOT_LEADER, FencingStateMachine.READ_NOT_CONFIRMED)
        .build();
  }

  // ---------------------------------------------------------------------------------------------
  // Streams

  @Override
  public void watch(WatchRequest request, StreamObserver<Response> out) {
    if (!refusedGroup(request.getGroup(), out)) {
      streams.watch(request, caller(), out);
    }
  }

  @Override
  public StreamObserver<SessionRequest> session(StreamObserver<SessionResponse> out) {
    return streams.session(caller(), out);
  }

  // ---------------------------------------------------------------------------------------------
  // Admin: the Raft group itself, through this node's own Raft server (AdminCalls).

  @Override
  public void members(MembersRequest request, StreamObserver<Response> out) {
    if (!refusedGroup(request.getGroup(), out)) {
      reply(out, admin.members(request));
    }
  }

  @Override
  public void addMember(AddMemberRequest request, StreamObserver<Response> out) {
    if (!refusedGroup(request.getGroup(), out)) {
      answer(admin.addMember(request, caller()), out);
    }
  }

  @Override
  public void removeMember(RemoveMemberRequest request, StreamObserver<Response> out) {
    if (!refusedGroup(request.getGroup(), out)) {
      answer(admin.removeMember(request, caller()), out);
    }
  }

  @Override
  public void transferLeadership(TransferLeadershipRequest request, StreamObserver<Response> out) {
    if (!refusedGroup(request.getGroup(), out)) {
      answer(admin.transferLeadership(request, caller()), out);
    }
  }

  @Override
  public void snapshot(SnapshotRequest request, StreamObserver<Response> out) {
    if (!refusedGroup(request.getGroup(), out)) {
      answer(admin.snapshot(request, caller()), out);
    }
  }

  @Override
  public void joinGroup(JoinGroupRequest request, StreamObserver<Response> out) {
    if (!refusedGroup(request.getGroup(), out)) {
      answer(admin.joinGroup(request, caller()), out);
    }
  }

  private static void answer(CompletableFuture<Response> answer, StreamObserver<Response> out) {
    answer.whenComplete(
        (r, e) -> reply(out, e == null ? r : WireCodec.internal("admin call failed: " + e)));
  }

  // ---------------------------------------------------------------------------------------------

  /** True (and the call answered INVALID_ARGUMENT) when {@code group} is not the one served. */
  static boolean refusedGroup(String group, StreamObserver<Response> out) {
    if (group.isEmpty()) {
      return false;
    }
    reply(out, invalidGroup(group));
    return true;
  }

  static Response invalidGroup(String group) {
    return WireCodec.invalid(
        "group: '"
            + group
            + "' is not served here; the field is reserved for routing among several Raft"
            + " groups, and a cluster of one group takes it empty");
  }

  static void reply(StreamObserver<Response> out, Response response) {
    try {
      out.onNext(response);
      out.onCompleted();
    } catch (RuntimeException e) {
      LOG.debug("Answer not sent (the call ended): {}", e.toString());
    }
  }
}
