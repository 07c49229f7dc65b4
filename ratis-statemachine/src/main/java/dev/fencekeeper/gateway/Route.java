package dev.fencekeeper.gateway;

import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.BackupRequest;
import dev.fencekeeper.proto.BatchRequest;
import dev.fencekeeper.proto.CancelWaitRequest;
import dev.fencekeeper.proto.FencekeeperGrpc.AsyncService;
import dev.fencekeeper.proto.LeaseQuery;
import dev.fencekeeper.proto.ListRequest;
import dev.fencekeeper.proto.NodeInfoQuery;
import dev.fencekeeper.proto.ReadRequest;
import dev.fencekeeper.proto.ReleaseRequest;
import dev.fencekeeper.proto.RenewRequest;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.RevokeRequest;
import dev.fencekeeper.proto.ValidateRequest;
import dev.fencekeeper.proto.WatchRequest;
import dev.fencekeeper.proto.WriteRequest;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.ratis.thirdparty.com.google.protobuf.Message;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;

/**
 * One route of the gateway: a path, the call of {@code fencekeeper.v1.Fencekeeper} it maps to, and
 * how its answer comes back (one JSON object, or a stream of them). Every route is a POST of the
 * call's request message as JSON; {@code GET} is also accepted where the request has no fields.
 */
record Route(
    String path, String rpc, Kind kind, Supplier<Message.Builder> request, Invoker invoker) {

  enum Kind {
    /** One request, one answer. */
    UNARY,
    /** One request; answers as newline-delimited JSON while the call lasts. */
    SERVER_STREAM,
    /** The Session call: messages both ways as newline-delimited JSON. */
    SESSION
  }

  /** Calls the service's method for this route. */
  @FunctionalInterface
  interface Invoker {
    void invoke(AsyncService service, Message request, StreamObserver<Response> answers);
  }

  static final String SESSION_PATH = "/v1/session";

  /** Every route, by path, in the order of the reference. */
  static final Map<String, Route> ALL = routes();

  boolean acceptsGet() {
    return request.get().getDescriptorForType().getFields().isEmpty();
  }

  private static Map<String, Route> routes() {
    Map<String, Route> r = new LinkedHashMap<>();
    unary(
        r,
        "/v1/leases/acquire",
        "Acquire",
        AcquireRequest::newBuilder,
        (s, m, o) -> s.acquire((AcquireRequest) m, o));
    unary(
        r,
        "/v1/leases/cancel-wait",
        "CancelWait",
        CancelWaitRequest::newBuilder,
        (s, m, o) -> s.cancelWait((CancelWaitRequest) m, o));
    unary(
        r,
        "/v1/leases/renew",
        "Renew",
        RenewRequest::newBuilder,
        (s, m, o) -> s.renew((RenewRequest) m, o));
    unary(
        r,
        "/v1/leases/release",
        "Release",
        ReleaseRequest::newBuilder,
        (s, m, o) -> s.release((ReleaseRequest) m, o));
    unary(
        r,
        "/v1/leases/revoke",
        "Revoke",
        RevokeRequest::newBuilder,
        (s, m, o) -> s.revoke((RevokeRequest) m, o));
    unary(
        r,
        "/v1/leases/get",
        "GetLease",
        LeaseQuery::newBuilder,
        (s, m, o) -> s.getLease((LeaseQuery) m, o));
    unary(
        r,
        "/v1/leases/validate",
        "Validate",
        ValidateRequest::newBuilder,
        (s, m, o) -> s.validate((ValidateRequest) m, o));
    r.put(
        "/v1/leases/watch",
        new Route(
            "/v1/leases/watch",
            "Watch",
            Kind.SERVER_STREAM,
            WatchRequest::newBuilder,
            (s, m, o) -> s.watch((WatchRequest) m, o)));
    unary(
        r,
        "/v1/values/write",
        "Write",
        WriteRequest::newBuilder,
        (s, m, o) -> s.write((WriteRequest) m, o));
    unary(
        r,
        "/v1/values/read",
        "Read",
        ReadRequest::newBuilder,
        (s, m, o) -> s.read((ReadRequest) m, o));
    unary(
        r,
        "/v1/batch",
        "Batch",
        BatchRequest::newBuilder,
        (s, m, o) -> s.batch((BatchRequest) m, o));
    unary(r, "/v1/list", "List", ListRequest::newBuilder, (s, m, o) -> s.list((ListRequest) m, o));
    unary(
        r,
        "/v1/node/status",
        "NodeStatus",
        NodeInfoQuery::newBuilder,
        (s, m, o) -> s.nodeStatus((NodeInfoQuery) m, o));
    unary(
        r,
        "/v1/backup",
        "Backup",
        BackupRequest::newBuilder,
        (s, m, o) -> s.backup((BackupRequest) m, o));
    r.put(
        SESSION_PATH,
        new Route(
            SESSION_PATH,
            "Session",
            Kind.SESSION,
            dev.fencekeeper.proto.SessionRequest::newBuilder,
            (s, m, o) -> {
              throw new UnsupportedOperationException("Session is a bidirectional stream");
            }));
    return Collections.unmodifiableMap(r);
  }

  private static void unary(
      Map<String, Route> routes,
      String path,
      String rpc,
      Supplier<Message.Builder> request,
      Invoker invoker) {
    routes.put(path, new Route(path, rpc, Kind.UNARY, request, invoker));
  }
}
