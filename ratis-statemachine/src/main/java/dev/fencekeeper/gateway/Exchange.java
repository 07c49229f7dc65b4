package dev.fencekeeper.gateway;

import dev.fencekeeper.gateway.JsonMapping.BadJson;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.SessionRequest;
import dev.fencekeeper.proto.SessionResponse;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Set;
import org.apache.ratis.thirdparty.com.google.protobuf.Message;
import org.apache.ratis.thirdparty.io.grpc.Context;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.apache.ratis.thirdparty.io.netty.buffer.ByteBuf;
import org.apache.ratis.thirdparty.io.netty.buffer.Unpooled;
import org.apache.ratis.thirdparty.io.netty.channel.Channel;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelFutureListener;
import org.apache.ratis.thirdparty.io.netty.channel.ChannelHandlerContext;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http.DefaultHttpContent;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http.DefaultHttpResponse;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http.HttpContent;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http.HttpHeaderNames;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http.HttpHeaderValues;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http.HttpResponse;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http.HttpResponseStatus;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http.HttpVersion;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http.LastHttpContent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One request of the gateway and its answers. The body is read (within the size and time bounds),
 * decoded from JSON into the route's request message, and the service's method is called in-process
 * under the caller's identity; its answers become one JSON object (unary routes) or
 * newline-delimited JSON while the call lasts (watch, session). The Session route streams its
 * request body too: each line is one {@code SessionRequest}, handed to the service as it arrives.
 */
final class Exchange {
  private static final Logger LOG = LoggerFactory.getLogger(Exchange.class);
  private static final String NDJSON = "application/x-ndjson";

  /** First answers of a stream that end it before it started: answered as one JSON object. */
  private static final Set<ResultCode> ENDS_A_STREAM =
      Set.of(
          ResultCode.INVALID_ARGUMENT,
          ResultCode.PERMISSION_DENIED,
          ResultCode.NOT_LEADER,
          ResultCode.OVERLOADED,
          ResultCode.COMPACTED,
          ResultCode.INTERNAL,
          ResultCode.UNAVAILABLE);

  private final GatewayContext gateway;
  private final ChannelHandlerContext ctx;
  private final Route route;
  private final boolean keepAlive;
  private final String caller;
  private final ByteArrayOutputStream body = new ByteArrayOutputStream();
  private final Deque<SessionRequest> heldBack = new ArrayDeque<>();
  private volatile boolean finished;
  private boolean headersSent;
  private boolean inboundDone;
  private Context.CancellableContext context;
  private CallObserver<?> observer;
  private StreamObserver<SessionRequest> sessionRequests;

  Exchange(
      GatewayContext gateway,
      ChannelHandlerContext ctx,
      Route route,
      boolean keepAlive,
      String caller) {
    this.gateway = gateway;
    this.ctx = ctx;
    this.route = route;
    this.keepAlive = keepAlive;
    this.caller = caller;
  }

  /** An exchange that reads and drops the rest of a request already answered. */
  static Exchange discarding() {
    Exchange e = new Exchange(null, null, null, false, "");
    e.finished = true;
    return e;
  }

  boolean isFinished() {
    return finished;
  }

  void begin() {
    if (route.kind() == Route.Kind.SESSION) {
      startSession();
    }
  }

  void onContent(HttpContent content) {
    if (finished) {
      return;
    }
    ByteBuf bytes = content.content();
    if (body.size() + bytes.readableBytes() > gateway.settings().maxBodyBytes()) {
      refuse(
          HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
          ResultCode.INVALID_ARGUMENT,
          (route.kind() == Route.Kind.SESSION ? "a session message" : "the request body")
              + " is over "
              + gateway.settings().maxBodyBytes()
              + " bytes");
      return;
    }
    byte[] chunk = new byte[bytes.readableBytes()];
    bytes.readBytes(chunk);
    body.write(chunk, 0, chunk.length);
    if (route.kind() == Route.Kind.SESSION) {
      sessionLines();
    }
    if (content instanceof LastHttpContent) {
      if (route.kind() == Route.Kind.SESSION) {
        inboundDone = true;
        drain();
      } else {
        dispatch();
      }
    }
  }

  /** The request's time ran out before its body was complete: 408, and the connection closes. */
  void timedOut() {
    if (!finished && context == null) {
      refuse(
          HttpResponseStatus.REQUEST_TIMEOUT,
          ResultCode.INVALID_ARGUMENT,
          GatewayHandler.notCompleteInTime(gateway.settings()));
    }
  }

  /** A unary or server-streaming call: the whole body is the request message. */
  private void dispatch() {
    Message request;
    try {
      byte[] bytes = body.toByteArray();
      request =
          JsonMapping.parse(JsonMapping.utf8(bytes, 0, bytes.length), route.request().get())
              .build();
    } catch (BadJson e) {
      refuse(
          HttpResponseStatus.BAD_REQUEST,
          ResultCode.INVALID_ARGUMENT,
          route.rpc() + ": " + e.getMessage());
      return;
    }
    CallObserver<Response> answers =
        new CallObserver<>(route.kind() == Route.Kind.UNARY ? new UnarySink() : new StreamSink());
    observer = answers;
    context = gateway.contextFor(caller).withCancellation();
    Context previous = context.attach();
    try {
      route.invoker().invoke(gateway.service(), request, answers);
    } catch (RuntimeException e) {
      LOG.warn("gateway: {} failed in the service", route.rpc(), e);
      answers.onError(e);
    } finally {
      context.detach(previous);
    }
  }

  private void startSession() {
    CallObserver<SessionResponse> answers = new CallObserver<>(new SessionSink());
    observer = answers;
    answers.onRequest(() -> ctx.executor().execute(this::drain));
    context = gateway.contextFor(caller).withCancellation();
    Context previous = context.attach();
    try {
      sessionRequests = gateway.service().session(answers);
    } catch (RuntimeException e) {
      LOG.warn("gateway: Session failed in the service", e);
      answers.onError(e);
    } finally {
      context.detach(previous);
    }
  }

  /** Every complete line of the body so far is one session message. */
  private void sessionLines() {
    byte[] bytes = body.toByteArray();
    int start = 0;
    for (int i = 0; i < bytes.length; i++) {
      if (bytes[i] == '\n') {
        int from = start;
        start = i + 1;
        try {
          String line = JsonMapping.utf8(bytes, from, i - from).trim();
          if (line.isEmpty()) {
            continue;
          }
          heldBack.add(JsonMapping.parse(line, SessionRequest.newBuilder()).build());
        } catch (BadJson e) {
          endSession(ResultCode.INVALID_ARGUMENT, "Session: " + e.getMessage());
          return;
        }
      }
    }
    body.reset();
    body.write(bytes, start, bytes.length - start);
    drain();
  }

  /** Hands held-back session messages to the service as its flow control allows. */
  private void drain() {
    if (sessionRequests == null || finished) {
      return;
    }
    Context previous = context.attach();
    try {
      while (!heldBack.isEmpty() && observer.takePermit()) {
        sessionRequests.onNext(heldBack.poll());
      }
      if (inboundDone && heldBack.isEmpty()) {
        inboundDone = false;
        sessionRequests.onCompleted();
      }
    } catch (RuntimeException e) {
      LOG.warn("gateway: the service failed on a session message", e);
      observer.onError(e);
    } finally {
      context.detach(previous);
    }
  }

  /** The connection closed: the call, if any, is cancelled. */
  void connectionClosed() {
    if (observer != null) {
      observer.cancel();
    }
    finish();
  }

  void writable() {
    if (observer != null) {
      observer.ready();
    }
  }

  private synchronized void finish() {
    finished = true;
    if (context != null) {
      context.cancel(null);
    }
  }

  /** Answers the request with a refusal made here, cancelling the call if one started. */
  private synchronized void refuse(HttpResponseStatus status, ResultCode code, String message) {
    if (finished) {
      return;
    }
    if (headersSent) {
      endSession(code, message);
      return;
    }
    GatewayHandler.respond(ctx, status, JsonMapping.rejection(code, message), false, null);
    if (observer != null) {
      observer.cancel();
    }
    finish();
  }

  /** Answers with the service's Response (the first of a stream included), as one JSON object. */
  private synchronized void answer(Response answer, boolean more) {
    if (finished) {
      return;
    }
    // A node's answer about itself carries no result code: it is what was asked for.
    Response response =
        answer.getCode() == ResultCode.RESULT_CODE_UNSPECIFIED && answer.hasNode()
            ? answer.toBuilder().setCode(ResultCode.FOUND).build()
            : answer;
    HttpResponseStatus status = JsonMapping.httpStatus(response.getCode());
    String location = null;
    if (response.getCode() == ResultCode.NOT_LEADER) {
      location = gateway.leaderUrl(response.getLeaderId(), route.path()).orElse(null);
      if (location == null) {
        status = HttpResponseStatus.SERVICE_UNAVAILABLE;
      }
    }
    GatewayHandler.respond(ctx, status, JsonMapping.print(response), keepAlive && !more, location);
    if (more && observer != null) {
      observer.cancel();
    }
    finish();
  }

  /** A call that failed with a gRPC status (not a Response): its code, never a stack trace. */
  private synchronized void failed(Throwable error) {
    Status status = Status.fromThrowable(error);
    ResultCode code =
        switch (status.getCode()) {
          case INVALID_ARGUMENT, OUT_OF_RANGE -> ResultCode.INVALID_ARGUMENT;
          case PERMISSION_DENIED, UNAUTHENTICATED -> ResultCode.PERMISSION_DENIED;
          case RESOURCE_EXHAUSTED -> ResultCode.OVERLOADED;
          case UNAVAILABLE, DEADLINE_EXCEEDED -> ResultCode.UNAVAILABLE;
          default -> ResultCode.INTERNAL;
        };
    String message =
        status.getDescription() != null && code != ResultCode.INTERNAL
            ? status.getDescription()
            : "the node failed to answer "
                + route.rpc()
                + " ("
                + status.getCode()
                + "); see its log";
    if (code == ResultCode.INTERNAL) {
      LOG.warn("gateway: {} failed: {}", route.rpc(), status, error);
    }
    if (headersSent) {
      endSession(code, message);
    } else {
      refuse(JsonMapping.httpStatus(code), code, message);
    }
  }

  private synchronized void line(String json) {
    if (finished) {
      return;
    }
    Channel channel = ctx.channel();
    if (!headersSent) {
      headersSent = true;
      HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
      head.headers().set(HttpHeaderNames.CONTENT_TYPE, NDJSON);
      head.headers().set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
      head.headers().set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE);
      head.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
      ctx.write(head);
    }
    if (!channel.isWritable()
        && channel.bytesBeforeWritable() > gateway.settings().maxUnreadBytes()) {
      // A reader that does not keep up: cut off, as the client port does.
      LOG.info(
          "gateway: closing {} stream to {}, it does not read",
          route.rpc(),
          channel.remoteAddress());
      channel.close();
      return;
    }
    ctx.writeAndFlush(
        new DefaultHttpContent(Unpooled.copiedBuffer(json + "\n", StandardCharsets.UTF_8)));
  }

  private synchronized void endStream() {
    if (finished) {
      return;
    }
    if (!headersSent) {
      line("");
    }
    ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT).addListener(ChannelFutureListener.CLOSE);
    finish();
  }

  /** Ends a stream whose headers went out with one last error line. */
  private synchronized void endSession(ResultCode code, String message) {
    if (!headersSent) {
      refuse(JsonMapping.httpStatus(code), code, message);
      return;
    }
    Response error = Response.newBuilder().setCode(code).setMessage(message).build();
    line(
        route.kind() == Route.Kind.SESSION
            ? JsonMapping.print(SessionResponse.newBuilder().setError(error).build())
            : JsonMapping.print(error));
    if (observer != null) {
      observer.cancel();
    }
    endStream();
  }

  private final class UnarySink implements CallObserver.Sink<Response> {
    @Override
    public void next(Response response) {
      answer(response, false);
    }

    @Override
    public void completed() {
      if (!finished) {
        failed(Status.INTERNAL.withDescription("no answer").asRuntimeException());
      }
    }

    @Override
    public void failed(Throwable error) {
      Exchange.this.failed(error);
    }

    @Override
    public boolean writable() {
      return ctx.channel().isWritable();
    }
  }

  private final class StreamSink implements CallObserver.Sink<Response> {
    @Override
    public void next(Response response) {
      synchronized (Exchange.this) {
        if (!headersSent
            && ENDS_A_STREAM.contains(response.getCode())
            && response.getEventsCount() == 0) {
          answer(response, true);
        } else {
          line(JsonMapping.print(response));
        }
      }
    }

    @Override
    public void completed() {
      endStream();
    }

    @Override
    public void failed(Throwable error) {
      Exchange.this.failed(error);
    }

    @Override
    public boolean writable() {
      return ctx.channel().isWritable();
    }
  }

  private final class SessionSink implements CallObserver.Sink<SessionResponse> {
    @Override
    public void next(SessionResponse response) {
      synchronized (Exchange.this) {
        if (!headersSent && response.hasError()) {
          answer(response.getError(), true);
        } else {
          line(JsonMapping.print(response));
        }
      }
    }

    @Override
    public void completed() {
      endStream();
    }

    @Override
    public void failed(Throwable error) {
      Exchange.this.failed(error);
    }

    @Override
    public boolean writable() {
      return ctx.channel().isWritable();
    }
  }
}
