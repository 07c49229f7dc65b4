package dev.fencekeeper.client;

import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.BackupRequest;
import dev.fencekeeper.proto.BatchRequest;
import dev.fencekeeper.proto.CancelWaitRequest;
import dev.fencekeeper.proto.FencekeeperGrpc;
import dev.fencekeeper.proto.LeaseQuery;
import dev.fencekeeper.proto.ListRequest;
import dev.fencekeeper.proto.NodeInfoQuery;
import dev.fencekeeper.proto.ReadRequest;
import dev.fencekeeper.proto.ReleaseRequest;
import dev.fencekeeper.proto.RenewRequest;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.RevokeRequest;
import dev.fencekeeper.proto.ValidateRequest;
import dev.fencekeeper.proto.WatchRequest;
import dev.fencekeeper.proto.WriteRequest;
import java.util.List;
import java.util.function.BiConsumer;
import org.apache.ratis.thirdparty.com.google.protobuf.Message;
import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;

/**
 * The calls of {@code fencekeeper.v1} this client makes, each with its own request message: its
 * gRPC method, whether it is a command (through the log, answered by the leader: a refusal as
 * OVERLOADED is retried, and so is a leader's UNAVAILABLE, with the same request id), the name its
 * latency timer carries ({@link ClientMetrics}), and its place in the request envelope that only a
 * Batch call carries ({@link CommandCoalescer}).
 */
final class Rpc<T extends Message> {
  static final Rpc<AcquireRequest> ACQUIRE =
      new Rpc<>(
          "ACQUIRE",
          FencekeeperGrpc.getAcquireMethod(),
          true,
          Request.CommandCase.ACQUIRE,
          Request.Builder::setAcquire);
  static final Rpc<CancelWaitRequest> CANCEL_WAIT =
      new Rpc<>(
          "CANCEL_WAIT",
          FencekeeperGrpc.getCancelWaitMethod(),
          true,
          Request.CommandCase.CANCEL_WAIT,
          Request.Builder::setCancelWait);
  static final Rpc<RenewRequest> RENEW =
      new Rpc<>(
          "RENEW",
          FencekeeperGrpc.getRenewMethod(),
          true,
          Request.CommandCase.RENEW,
          Request.Builder::setRenew);
  static final Rpc<ReleaseRequest> RELEASE =
      new Rpc<>(
          "RELEASE",
          FencekeeperGrpc.getReleaseMethod(),
          true,
          Request.CommandCase.RELEASE,
          Request.Builder::setRelease);
  static final Rpc<RevokeRequest> REVOKE =
      new Rpc<>(
          "REVOKE",
          FencekeeperGrpc.getRevokeMethod(),
          true,
          Request.CommandCase.REVOKE,
          Request.Builder::setRevoke);
  static final Rpc<WriteRequest> WRITE =
      new Rpc<>(
          "WRITE",
          FencekeeperGrpc.getWriteMethod(),
          true,
          Request.CommandCase.WRITE,
          Request.Builder::setWrite);
  static final Rpc<BatchRequest> BATCH =
      new Rpc<>(
          "BATCH",
          FencekeeperGrpc.getBatchMethod(),
          true,
          Request.CommandCase.BATCH,
          Request.Builder::setBatch);
  static final Rpc<ReadRequest> READ =
      new Rpc<>(
          "READ",
          FencekeeperGrpc.getReadMethod(),
          false,
          Request.CommandCase.READ,
          Request.Builder::setRead);
  static final Rpc<LeaseQuery> LEASE =
      new Rpc<>(
          "LEASE",
          FencekeeperGrpc.getGetLeaseMethod(),
          false,
          Request.CommandCase.LEASE,
          Request.Builder::setLease);
  static final Rpc<ValidateRequest> VALIDATE =
      new Rpc<>(
          "VALIDATE",
          FencekeeperGrpc.getValidateMethod(),
          false,
          Request.CommandCase.VALIDATE,
          Request.Builder::setValidate);
  static final Rpc<ListRequest> LIST =
      new Rpc<>(
          "LIST",
          FencekeeperGrpc.getListMethod(),
          false,
          Request.CommandCase.LIST,
          Request.Builder::setList);
  static final Rpc<NodeInfoQuery> NODE_INFO =
      new Rpc<>(
          "NODE_INFO",
          FencekeeperGrpc.getNodeStatusMethod(),
          false,
          Request.CommandCase.NODE_INFO,
          Request.Builder::setNodeInfo);
  static final Rpc<BackupRequest> BACKUP =
      new Rpc<>(
          "BACKUP",
          FencekeeperGrpc.getBackupMethod(),
          false,
          Request.CommandCase.BACKUP,
          Request.Builder::setBackup);
  static final Rpc<WatchRequest> WATCH =
      new Rpc<>(
          "WATCH",
          FencekeeperGrpc.getWatchMethod(),
          false,
          Request.CommandCase.WATCH,
          Request.Builder::setWatch);

  /** Every call above, in the order of their metric names' registration. */
  static final List<Rpc<?>> ALL =
      List.of(
          ACQUIRE,
          RENEW,
          RELEASE,
          WRITE,
          READ,
          LEASE,
          VALIDATE,
          NODE_INFO,
          CANCEL_WAIT,
          REVOKE,
          WATCH,
          LIST,
          BACKUP,
          BATCH);

  /** The timer name of a session keep-alive, which renews every lease of the session. */
  static final String SESSION_KEEP_ALIVE = "RENEW_SESSION";

  final String name;
  final MethodDescriptor<T, Response> method;
  final boolean command;
  // The command's place in the nodes' Request envelope, which a Batch call carries.
  final Request.CommandCase kind;
  private final BiConsumer<Request.Builder, T> into;

  private Rpc(
      String name,
      MethodDescriptor<T, Response> method,
      boolean command,
      Request.CommandCase kind,
      BiConsumer<Request.Builder, T> into) {
    this.name = name;
    this.method = method;
    this.command = command;
    this.kind = kind;
    this.into = into;
  }

  /** {@code call} as one request of a Batch call. */
  static <T extends Message> Request envelope(Call<T> call) {
    Request.Builder r = Request.newBuilder();
    call.rpc().into.accept(r, call.message());
    return r.build();
  }

  /** One call ready to send: the method and its message. */
  record Call<T extends Message>(Rpc<T> rpc, T message) {
    /**
     * Whether only the leader answers it: commands, and queries asked linearizably (or a backup's
     * first call, which freezes the state after a read index).
     */
    boolean leaderOnly() {
      if (rpc.command) {
        return true;
      }
      if (message instanceof ReadRequest r) {
        return r.getConsistencyValue() == 0;
      }
      if (message instanceof LeaseQuery r) {
        return r.getConsistencyValue() == 0;
      }
      if (message instanceof ValidateRequest r) {
        return r.getConsistencyValue() == 0;
      }
      if (message instanceof ListRequest r) {
        return r.getConsistencyValue() == 0;
      }
      return message instanceof BackupRequest r && r.getBackupId().isEmpty();
    }
  }

  /**
   * The call a request envelope names, for fencekeeper's tools and tests that build envelopes
   * ({@link dev.fencekeeper.client.wire.Wire#send}); the client's own calls never make one.
   *
   * @throws IllegalArgumentException when the envelope names no call of the client protocol
   */
  static Call<?> of(Request r) {
    return switch (r.getCommandCase()) {
      case ACQUIRE -> new Call<>(ACQUIRE, r.getAcquire());
      case RENEW -> new Call<>(RENEW, r.getRenew());
      case RELEASE -> new Call<>(RELEASE, r.getRelease());
      case WRITE -> new Call<>(WRITE, r.getWrite());
      case READ -> new Call<>(READ, r.getRead());
      case LEASE -> new Call<>(LEASE, r.getLease());
      case VALIDATE -> new Call<>(VALIDATE, r.getValidate());
      case NODE_INFO -> new Call<>(NODE_INFO, r.getNodeInfo());
      case CANCEL_WAIT -> new Call<>(CANCEL_WAIT, r.getCancelWait());
      case REVOKE -> new Call<>(REVOKE, r.getRevoke());
      case LIST -> new Call<>(LIST, r.getList());
      case BACKUP -> new Call<>(BACKUP, r.getBackup());
      case BATCH -> new Call<>(BATCH, r.getBatch());
      case COMMAND_NOT_SET ->
          throw new IllegalArgumentException("command: the request names no command");
      default ->
          throw new IllegalArgumentException(
              "command: " + r.getCommandCase() + " is not a unary call of the client protocol");
    };
  }
}
