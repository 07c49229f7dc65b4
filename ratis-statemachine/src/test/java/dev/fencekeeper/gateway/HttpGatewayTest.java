package dev.fencekeeper.gateway;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.config.Security;
import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.FencekeeperGrpc.AsyncService;
import dev.fencekeeper.proto.LeaseEvent;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.SessionKeepAlive;
import dev.fencekeeper.proto.SessionOpened;
import dev.fencekeeper.proto.SessionRequest;
import dev.fencekeeper.proto.SessionResponse;
import dev.fencekeeper.proto.WatchRequest;
import dev.fencekeeper.proto.WriteRequest;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.ratis.thirdparty.io.grpc.Context;
import org.apache.ratis.thirdparty.io.grpc.stub.ServerCallStreamObserver;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The gateway's HTTP side, in front of a scripted service: routes, JSON both ways, status codes,
 * and every refusal it makes before the service is called (each checked to leave the service
 * uncalled). The real service behind it is tested through the gateway in the tools module and by
 * the reference's curl lines.
 */
@Timeout(60)
class HttpGatewayTest {
  static final Context.Key<String> CALLER = Context.key("test-caller");

  final ScriptedService service = new ScriptedService();
  final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  HttpGateway gateway;
  String base;

  @BeforeEach
  void start() throws IOException {
    startWith(100);
  }

  void startWith(int connections) throws IOException {
    if (gateway != null) {
      gateway.close();
    }
    GatewaySettings settings =
        new GatewaySettings(
            "127.0.0.1",
            0,
            Security.none(),
            64 * 1024,
            Duration.ofMillis(700),
            connections,
            Duration.ofSeconds(30),
            1 << 20);
    gateway =
        HttpGateway.start(
            settings,
            null,
            (remote, cause) -> {},
            service,
            caller -> Context.current().withValue(CALLER, caller),
            id -> id.equals("n2") ? Optional.of("127.0.0.1:7602") : Optional.empty());
    base = "http://127.0.0.1:" + gateway.port();
  }

  @AfterEach
  void stop() {
    gateway.close();
  }

  HttpResponse<String> post(String path, String json) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(base + path))
            .timeout(Duration.ofSeconds(10))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void acquireMapsJsonToTheRequestAndTheResponseBackWithItsStatus() throws Exception {
    service.answer =
        Response.newBuilder().setCode(ResultCode.GRANTED).setToken(41).setTtlMs(2000).build();
    HttpResponse<String> r =
        post(
            "/v1/leases/acquire",
            "{\"resource\":\"daily-sales-report\",\"ttl_ms\":2000,\"owner\":\"worker-a\",\"waitMs\":\"0\"}");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json");
    assertThat(r.body().trim())
        .isEqualTo("{\"status\":\"GRANTED\",\"token\":\"41\",\"ttlMs\":\"2000\"}");
    AcquireRequest sent = (AcquireRequest) service.requests.get(0);
    assertThat(sent.getResource()).isEqualTo("daily-sales-report");
    assertThat(sent.getOwner()).isEqualTo("worker-a");
    assertThat(sent.getTtlMs()).isEqualTo(2000);
    assertThat(service.callers).containsExactly("");
  }

  @Test
  void rejectionsCarryTheirContextAndAnHttpStatusThatMatches() throws Exception {
    service.answer =
        Response.newBuilder()
            .setCode(ResultCode.STALE_TOKEN)
            .setMessage("token 3 is stale")
            .setCurrentToken(7)
            .setSentToken(3)
            .build();
    HttpResponse<String> r =
        post(
            "/v1/values/write",
            "{\"resource\":\"r\",\"token\":\"3\",\"writes\":[{\"key\":\"k\",\"value\":\"bGF0ZQ==\"}]}");
    assertThat(r.statusCode()).isEqualTo(409);
    assertThat(r.body())
        .contains("\"status\":\"STALE_TOKEN\"", "\"currentToken\":\"7\"", "\"sentToken\":\"3\"");
    assertThat(((WriteRequest) service.requests.get(0)).getWrites(0).getValue().toStringUtf8())
        .isEqualTo("late");
  }

  @Test
  void notLeaderRedirectsToTheLeadersGatewayWhenItIsKnown() throws Exception {
    service.answer =
        Response.newBuilder()
            .setCode(ResultCode.NOT_LEADER)
            .setLeaderId("n2")
            .setLeaderAddress("127.0.0.1:7502")
            .build();
    HttpResponse<String> r = post("/v1/leases/acquire", "{\"resource\":\"r\",\"ttlMs\":1000}");
    assertThat(r.statusCode()).isEqualTo(307);
    assertThat(r.headers().firstValue("Location"))
        .hasValue("http://127.0.0.1:7602/v1/leases/acquire");
    assertThat(r.body()).contains("\"status\":\"NOT_LEADER\"", "\"leaderId\":\"n2\"");

    service.answer = Response.newBuilder().setCode(ResultCode.NOT_LEADER).build();
    HttpResponse<String> unknown =
        post("/v1/leases/acquire", "{\"resource\":\"r\",\"ttlMs\":1000}");
    assertThat(unknown.statusCode()).isEqualTo(503);
    assertThat(unknown.headers().firstValue("Retry-After")).hasValue("1");
  }

  @Test
  void malformedJsonWrongTypesAndUnknownFieldsAreRefusedBeforeTheService() throws Exception {
    for (String body :
        List.of(
            "{\"resource\":",
            "not json",
            "{\"resource\":\"r\",\"ttlMs\":\"soon\"}",
            "{\"resource\":[1,2]}",
            "{\"resource\":\"r\",\"ttl\":1000}",
            "[]")) {
      HttpResponse<String> r = post("/v1/leases/acquire", body);
      assertThat(r.statusCode()).as(body).isEqualTo(400);
      assertThat(r.body())
          .as(body)
          .startsWith("{\"status\":\"INVALID_ARGUMENT\",\"message\":\"Acquire: ");
      assertThat(r.body()).doesNotContain("Exception", "\tat ", "JsonReader");
    }
    assertThat(service.requests).isEmpty();
  }

  // Guarantee: a body that is not UTF-8 (bytes ff fe in a key, an encoded lone surrogate ed a0 80
  // in a resource name) is refused 400 INVALID_ARGUMENT and the service is never called; decoded
  // leniently it would be a write under k\uFFFD\uFFFD or an acquire of another resource.
  @Test
  void aBodyThatIsNotUtf8IsRefusedBeforeTheService() throws Exception {
    byte[] badKey =
        bytes(
            "{\"resource\":\"r\",\"token\":\"3\",\"writes\":[{\"key\":\"k",
            new byte[] {(byte) 0xff, (byte) 0xfe},
            "\",\"value\":\"eA==\"}]}");
    HttpResponse<String> write = postBytes("/v1/values/write", badKey);
    assertThat(write.statusCode()).isEqualTo(400);
    assertThat(write.body())
        .startsWith("{\"status\":\"INVALID_ARGUMENT\",\"message\":\"Write: ")
        .contains("not valid UTF-8 (bad byte ff at offset 47)");
    byte[] loneSurrogate =
        bytes(
            "{\"resource\":\"inv",
            new byte[] {(byte) 0xed, (byte) 0xa0, (byte) 0x80},
            "utf8\",\"ttlMs\":1000}");
    HttpResponse<String> acquire = postBytes("/v1/leases/acquire", loneSurrogate);
    assertThat(acquire.statusCode()).isEqualTo(400);
    assertThat(acquire.body()).contains("INVALID_ARGUMENT", "not valid UTF-8 (bad byte ed");
    assertThat(service.requests).isEmpty();
  }

  // Guarantee: a session line that is not UTF-8 ends the stream with INVALID_ARGUMENT and is never
  // handed to the service.
  @Test
  void aSessionLineThatIsNotUtf8EndsTheSession() throws Exception {
    try (Socket socket = new Socket("127.0.0.1", gateway.port())) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      out.write(
          "POST /v1/session HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
              .getBytes(UTF_8));
      chunk(out, "{\"open\":{\"sessionId\":\"abcdefghijklmnop\"}}\n");
      BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), UTF_8));
      assertThat(in.readLine()).isEqualTo("HTTP/1.1 200 OK");
      chunk(
          out,
          bytes(
              "{\"open\":{\"sessionId\":\"abcdefghijklmno",
              new byte[] {(byte) 0xed, (byte) 0xa0, (byte) 0x80},
              "\"}}\n"));
      assertThat(readAll(in))
          .contains("{\"error\":{\"status\":\"INVALID_ARGUMENT\",\"message\":\"Session: ")
          .contains("not valid UTF-8");
    }
    assertThat(service.sessionMessages)
        .extracting(SessionRequest::getKindCase)
        .containsExactly(SessionRequest.KindCase.OPEN);
  }

  @Test
  void unknownRoutesAndMethodsAreRefused() throws Exception {
    HttpResponse<String> missing = post("/v1/leases/steal", "{}");
    assertThat(missing.statusCode()).isEqualTo(404);
    assertThat(missing.body()).contains("INVALID_ARGUMENT", "no route /v1/leases/steal");
    HttpResponse<String> get =
        http.send(
            HttpRequest.newBuilder(URI.create(base + "/v1/leases/acquire")).GET().build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(get.statusCode()).isEqualTo(405);
    assertThat(service.requests).isEmpty();
  }

  @Test
  void anOversizeBodyIsRefusedWhetherItsLengthIsAnnouncedOrNot() throws Exception {
    String big = "{\"resource\":\"" + "x".repeat(70 * 1024) + "\"}";
    HttpResponse<String> announced = post("/v1/leases/acquire", big);
    assertThat(announced.statusCode()).isEqualTo(413);
    assertThat(announced.body()).contains("INVALID_ARGUMENT");
    String chunked =
        rawExchange(
            "POST /v1/leases/acquire HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                + Integer.toHexString(big.length())
                + "\r\n"
                + big
                + "\r\n0\r\n\r\n");
    assertThat(chunked).startsWith("HTTP/1.1 413");
    assertThat(service.requests).isEmpty();
  }

  @Test
  void aRequestThatDoesNotArriveInTimeIsAnswered408AndClosed() throws Exception {
    try (Socket socket = new Socket("127.0.0.1", gateway.port())) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      out.write(
          "POST /v1/leases/acquire HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"reso"
              .getBytes(UTF_8));
      out.flush();
      String answer = new String(socket.getInputStream().readAllBytes(), UTF_8);
      assertThat(answer)
          .startsWith("HTTP/1.1 408")
          .contains("INVALID_ARGUMENT", "not complete within 700 ms");
    }
    assertThat(service.requests).isEmpty();
  }

  // Guarantee: the request timeout runs from a request's first byte: a request line trickled one
  // byte every 100 ms, and complete request line followed by headers trickled the same way, are
  // answered 408 and closed once the timeout (700 ms here) has passed, never left open.
  @Test
  void aTrickledRequestLineOrTrickledHeadersAreAnswered408AndClosed() throws Exception {
    for (String request :
        List.of(
            "POST /v1/leases/acquire/and/a/long/path/that/never/ends/",
            "POST /v1/leases/acquire HTTP/1.1\r\n"
                + "Host: x\r\n"
                + "X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")) {
      try (Socket socket = new Socket("127.0.0.1", gateway.port())) {
        socket.setSoTimeout(10_000);
        OutputStream out = socket.getOutputStream();
        long start = System.nanoTime();
        Thread trickler =
            new Thread(
                () -> {
                  try {
                    for (byte b : request.getBytes(UTF_8)) {
                      out.write(b);
                      out.flush();
                      Thread.sleep(100);
                    }
                  } catch (IOException | InterruptedException stopped) {
                    // cut off, or the test ended
                  }
                });
        trickler.setDaemon(true);
        trickler.start();
        String answer = new String(socket.getInputStream().readAllBytes(), UTF_8);
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        trickler.interrupt();
        assertThat(answer)
            .as(request)
            .startsWith("HTTP/1.1 408")
            .contains("INVALID_ARGUMENT", "not complete within 700 ms");
        // Answered after the timeout, and closed well before the whole request would have arrived.
        assertThat(tookMs).as(request).isBetween(600L, 4_500L);
      }
    }
    assertThat(service.requests).isEmpty();
  }

  @Test
  void aWatchStreamsNewlineDelimitedJsonWhileTheCallLasts() throws Exception {
    service.watchAnswers =
        List.of(
            Response.newBuilder()
                .setCode(ResultCode.FOUND)
                .addEvents(event(5, LeaseEvent.Type.ACQUIRED))
                .build(),
            Response.newBuilder()
                .setCode(ResultCode.FOUND)
                .addEvents(event(6, LeaseEvent.Type.RELEASED))
                .build());
    HttpResponse<String> r = post("/v1/leases/watch", "{\"resource\":\"r\",\"timeoutMs\":1000}");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type")).hasValue("application/x-ndjson");
    assertThat(r.body().lines().toList())
        .containsExactly(
            "{\"status\":\"FOUND\",\"events\":[{\"index\":\"5\",\"type\":\"ACQUIRED\",\"resource\":\"r\",\"token\":\"5\"}]}",
            "{\"status\":\"FOUND\",\"events\":[{\"index\":\"6\",\"type\":\"RELEASED\",\"resource\":\"r\",\"token\":\"5\"}]}");
    assertThat(((WatchRequest) service.requests.get(0)).getTimeoutMs()).isEqualTo(1000);
  }

  @Test
  void aStreamRefusedAtOnceIsAnsweredAsOneObjectWithItsStatus() throws Exception {
    service.watchAnswers =
        List.of(Response.newBuilder().setCode(ResultCode.COMPACTED).setMessage("gone").build());
    HttpResponse<String> r = post("/v1/leases/watch", "{\"resource\":\"r\",\"afterIndex\":\"1\"}");
    assertThat(r.statusCode()).isEqualTo(410);
    assertThat(r.body()).contains("\"status\":\"COMPACTED\"");
  }

  // Guarantee: the gateway keeps no stream count of its own (the service bounds streams per
  // identity, each kind on its own): a stream the service refuses OVERLOADED is answered 429 with
  // Retry-After; and (below) a stream whose client hangs up has its call cancelled.
  @Test
  void aStreamTheServiceRefusesOverloadedIs429() throws Exception {
    service.watchAnswers =
        List.of(
            Response.newBuilder()
                .setCode(ResultCode.OVERLOADED)
                .setMessage("identity '' already has 1024 watches open on this node")
                .build());
    HttpResponse<String> refused = post("/v1/leases/watch", "{\"resource\":\"r\"}");
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(refused.body()).contains("\"status\":\"OVERLOADED\"", "1024 watches open");
    assertThat(refused.headers().firstValue("Retry-After")).hasValue("1");
  }

  @Test
  void aStreamWhoseClientHangsUpHasItsCallCancelled() throws Exception {
    service.watchHangs = true;
    Socket one = openWatch();
    Socket two = openWatch();
    assertThat(service.watchesOpen.await(10, TimeUnit.SECONDS)).isTrue();
    one.close();
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (service.cancelled.get() < 1 && System.nanoTime() < until) {
      Thread.sleep(20);
    }
    assertThat(service.cancelled.get()).isEqualTo(1);
    two.close();
  }

  @Test
  void connectionsOverTheLimitAreAnswered429() throws Exception {
    startWith(1);
    try (Socket held = new Socket("127.0.0.1", gateway.port())) {
      Thread.sleep(200);
      HttpResponse<String> r = post("/v1/node/status", "{}");
      assertThat(r.statusCode()).isEqualTo(429);
      assertThat(r.body()).contains("OVERLOADED");
    }
  }

  @Test
  void aSessionCarriesNewlineDelimitedMessagesBothWays() throws Exception {
    try (Socket socket = new Socket("127.0.0.1", gateway.port())) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      out.write(
          "POST /v1/session HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
              .getBytes(UTF_8));
      chunk(out, "{\"open\":{\"sessionId\":\"abcdefghijklmnop\"}}\n{\"keepAl");
      chunk(out, "ive\":{\"seq\":\"1\"}}\n");
      BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), UTF_8));
      assertThat(in.readLine()).isEqualTo("HTTP/1.1 200 OK");
      List<String> lines = new CopyOnWriteArrayList<>();
      for (String line; lines.size() < 2 && (line = in.readLine()) != null; ) {
        if (line.startsWith("{")) {
          lines.add(line);
        }
      }
      assertThat(lines)
          .containsExactly(
              "{\"opened\":{\"sessionId\":\"abcdefghijklmnop\",\"appliedIndex\":\"9\"}}",
              "{\"keepAlive\":{\"status\":\"RENEWED\",\"seq\":\"1\"}}");
      chunk(out, "{\"keepAlive\":{\"seq\":\"no\"}}\n");
      String rest = readAll(in);
      assertThat(rest)
          .contains("{\"error\":{\"status\":\"INVALID_ARGUMENT\",\"message\":\"Session: ");
    }
    assertThat(service.sessionMessages)
        .extracting(SessionRequest::getKindCase)
        .containsExactly(SessionRequest.KindCase.OPEN, SessionRequest.KindCase.KEEP_ALIVE);
  }

  @Test
  void aServiceFailureIsAnInternalAnswerWithoutAStackTrace() throws Exception {
    service.fail =
        new IllegalStateException("boom at dev.fencekeeper.Secret.method(Secret.java:42)");
    HttpResponse<String> r = post("/v1/leases/get", "{\"resource\":\"r\"}");
    assertThat(r.statusCode()).isEqualTo(500);
    assertThat(r.body())
        .contains("\"status\":\"INTERNAL\"")
        .doesNotContain("Secret", "boom", "\tat ");
  }

  @Test
  void nodeStatusAlsoAnswersAGetAndItsAnswerIsFound() throws Exception {
    // The node answers about itself without a result code; the gateway's answer still has a status.
    service.answer =
        Response.newBuilder()
            .setNode(dev.fencekeeper.proto.NodeInfo.newBuilder().setId("n1"))
            .build();
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create(base + "/v1/node/status")).GET().build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).startsWith("{\"status\":\"FOUND\",\"node\":{\"id\":\"n1\"}");
  }

  HttpResponse<String> postBytes(String path, byte[] body) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(base + path))
            .timeout(Duration.ofSeconds(10))
            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static byte[] bytes(String before, byte[] raw, String after) {
    java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
    all.writeBytes(before.getBytes(UTF_8));
    all.writeBytes(raw);
    all.writeBytes(after.getBytes(UTF_8));
    return all.toByteArray();
  }

  private Socket openWatch() throws IOException {
    Socket socket = new Socket("127.0.0.1", gateway.port());
    String body = "{\"resource\":\"r\"}";
    socket
        .getOutputStream()
        .write(
            ("POST /v1/leases/watch HTTP/1.1\r\nHost: x\r\nContent-Length: "
                    + body.length()
                    + "\r\n\r\n"
                    + body)
                .getBytes(UTF_8));
    return socket;
  }

  private String rawExchange(String request) throws IOException {
    try (Socket socket = new Socket("127.0.0.1", gateway.port())) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write(request.getBytes(UTF_8));
      InputStream in = socket.getInputStream();
      return new String(in.readAllBytes(), UTF_8);
    } catch (java.net.SocketException reset) {
      return "reset: " + reset.getMessage();
    }
  }

  private static void chunk(OutputStream out, String text) throws IOException {
    chunk(out, text.getBytes(UTF_8));
  }

  private static void chunk(OutputStream out, byte[] bytes) throws IOException {
    out.write((Integer.toHexString(bytes.length) + "\r\n").getBytes(UTF_8));
    out.write(bytes);
    out.write("\r\n".getBytes(UTF_8));
    out.flush();
  }

  private static String readAll(BufferedReader in) throws IOException {
    StringBuilder all = new StringBuilder();
    try {
      for (String line; (line = in.readLine()) != null; ) {
        all.append(line).append('\n');
      }
    } catch (java.net.SocketTimeoutException e) {
      // what arrived so far
    }
    return all.toString();
  }

  private static LeaseEvent event(long index, LeaseEvent.Type type) {
    return LeaseEvent.newBuilder()
        .setIndex(index)
        .setType(type)
        .setResource("r")
        .setToken(5)
        .build();
  }

  /** Answers as scripted and records what it was asked, by whom. */
  static final class ScriptedService implements AsyncService {
    volatile Response answer = Response.newBuilder().setCode(ResultCode.FOUND).build();
    volatile RuntimeException fail;
    volatile List<Response> watchAnswers = List.of();
    volatile boolean watchHangs;
    final CountDownLatch watchesOpen = new CountDownLatch(2);
    final AtomicInteger cancelled = new AtomicInteger();
    final List<Object> requests = new CopyOnWriteArrayList<>();
    final List<String> callers = new CopyOnWriteArrayList<>();
    final List<SessionRequest> sessionMessages = new CopyOnWriteArrayList<>();

    private void unary(Object request, StreamObserver<Response> out) {
      if (fail != null) {
        throw fail;
      }
      requests.add(request);
      callers.add(CALLER.get());
      out.onNext(answer);
      out.onCompleted();
    }

    @Override
    public void acquire(AcquireRequest request, StreamObserver<Response> out) {
      unary(request, out);
    }

    @Override
    public void write(WriteRequest request, StreamObserver<Response> out) {
      unary(request, out);
    }

    @Override
    public void getLease(dev.fencekeeper.proto.LeaseQuery request, StreamObserver<Response> out) {
      unary(request, out);
    }

    @Override
    public void nodeStatus(
        dev.fencekeeper.proto.NodeInfoQuery request, StreamObserver<Response> out) {
      unary(request, out);
    }

    @Override
    public void watch(WatchRequest request, StreamObserver<Response> out) {
      requests.add(request);
      ServerCallStreamObserver<Response> call = (ServerCallStreamObserver<Response>) out;
      call.setOnCancelHandler(cancelled::incrementAndGet);
      if (watchHangs) {
        watchesOpen.countDown();
        return;
      }
      watchAnswers.forEach(out::onNext);
      out.onCompleted();
    }

    @Override
    public StreamObserver<SessionRequest> session(StreamObserver<SessionResponse> out) {
      return new StreamObserver<>() {
        @Override
        public void onNext(SessionRequest message) {
          sessionMessages.add(message);
          if (message.hasOpen()) {
            out.onNext(
                SessionResponse.newBuilder()
                    .setOpened(
                        SessionOpened.newBuilder()
                            .setSessionId(message.getOpen().getSessionId())
                            .setAppliedIndex(9))
                    .build());
          } else if (message.hasKeepAlive()) {
            SessionKeepAlive keepAlive = message.getKeepAlive();
            out.onNext(
                SessionResponse.newBuilder()
                    .setKeepAlive(
                        dev.fencekeeper.proto.KeepAliveAnswer.newBuilder()
                            .setSeq(keepAlive.getSeq())
                            .setCode(ResultCode.RENEWED))
                    .build());
          }
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {
          out.onCompleted();
        }
      };
    }
  }
}
