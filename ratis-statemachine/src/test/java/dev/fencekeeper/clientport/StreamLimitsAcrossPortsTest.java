package dev.fencekeeper.clientport;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.SessionOpen;
import dev.fencekeeper.proto.SessionRequest;
import dev.fencekeeper.proto.SessionResponse;
import dev.fencekeeper.proto.WatchRequest;
import dev.fencekeeper.server.FencekeeperServer;
import dev.fencekeeper.server.RaftConfig;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Stream limits are one rule on a node, whichever port a stream comes through: an identity's
 * watches count against {@code limits.watches-per-client.max} and its sessions against {@code
 * limits.sessions-per-client.max}, each kind on its own, the gateway's and the client port's
 * together.
 */
@Timeout(120)
class StreamLimitsAcrossPortsTest {
  @TempDir Path dir;
  private FencekeeperServer server;
  private final List<Socket> sockets = new ArrayList<>();

  @AfterEach
  void stop() throws IOException {
    for (Socket s : sockets) {
      s.close();
    }
    if (server != null) {
      server.close();
    }
  }

  // Guarantee: with 2 watches and 1 session per identity, two watches on the gateway use up the
  // watches (a third, on either port, is OVERLOADED naming the watch limit), while a session still
  // opens on the gateway; a second session, on either port, is OVERLOADED naming the session limit.
  @Test
  void watchesAndSessionsAreEachBoundedOnTheirOwnAcrossBothPorts() throws Exception {
    int port = LocalPorts.freeNodePort();
    Properties p = new Properties();
    p.setProperty("peers", "n1@127.0.0.1:" + port);
    p.setProperty("node.id", "n1");
    p.setProperty("storage.dir", dir.resolve("n1").toString());
    p.setProperty("limits.watches-per-client.max", "2");
    p.setProperty("limits.sessions-per-client.max", "1");
    server = FencekeeperServer.start(ClusterConfig.fromProperties(p));
    await().atMost(Duration.ofSeconds(60)).until(this::leads);
    int gateway = server.gateway().orElseThrow().port();

    BufferedReader acquired =
        post(gateway, "/v1/leases/acquire", "{\"resource\":\"w\",\"ttlMs\":60000}");
    assertThat(acquired.readLine()).isEqualTo("HTTP/1.1 200 OK");

    try (Channels channels = new Channels()) {
      String client = server.clientAddress();
      // The watches start at the oldest event, so each answers at once: then it is counted.
      for (int i = 0; i < 2; i++) {
        BufferedReader gatewayWatch = post(gateway, "/v1/leases/watch", FROM_OLDEST);
        assertThat(gatewayWatch.readLine()).isEqualTo("HTTP/1.1 200 OK");
        assertThat(firstJsonLine(gatewayWatch)).contains("ACQUIRED");
      }

      BufferedReader third = post(gateway, "/v1/leases/watch", FROM_OLDEST);
      assertThat(third.readLine()).startsWith("HTTP/1.1 429");
      assertThat(rest(third)).contains("OVERLOADED", "limits.watches-per-client.max");
      Collector<Response> thirdOverGrpc = new Collector<>();
      channels.async(client).watch(fromOldest(), thirdOverGrpc);
      Response refused = thirdOverGrpc.next(Duration.ofSeconds(10));
      assertThat(refused.getCode()).isEqualTo(ResultCode.OVERLOADED);
      assertThat(refused.getMessage()).contains("limits.watches-per-client.max");

      BufferedReader session = openSession(gateway, "session-over-http-01");
      assertThat(session.readLine()).isEqualTo("HTTP/1.1 200 OK");
      assertThat(firstJsonLine(session)).contains("\"opened\"");

      BufferedReader secondSession = openSession(gateway, "session-over-http-02");
      assertThat(secondSession.readLine()).startsWith("HTTP/1.1 429");
      assertThat(rest(secondSession)).contains("OVERLOADED", "limits.sessions-per-client.max");
      Collector<SessionResponse> grpcSession = new Collector<>();
      StreamObserver<SessionRequest> requests = channels.async(client).session(grpcSession);
      requests.onNext(
          SessionRequest.newBuilder()
              .setOpen(SessionOpen.newBuilder().setSessionId("session-over-grpc-01"))
              .build());
      SessionResponse answer = grpcSession.next(Duration.ofSeconds(10));
      assertThat(answer.getError().getCode()).isEqualTo(ResultCode.OVERLOADED);
      assertThat(answer.getError().getMessage()).contains("limits.sessions-per-client.max");
    }
  }

  private static final String FROM_OLDEST = "{\"resource\":\"w\",\"afterSeq\":2147483647}";

  private static WatchRequest fromOldest() {
    return WatchRequest.newBuilder().setResource("w").setAfterSeq(Integer.MAX_VALUE).build();
  }

  private BufferedReader post(int port, String path, String body) throws IOException {
    Socket socket = new Socket("127.0.0.1", port);
    sockets.add(socket);
    socket.setSoTimeout(10_000);
    socket
        .getOutputStream()
        .write(
            ("POST "
                    + path
                    + " HTTP/1.1\r\nHost: x\r\nContent-Length: "
                    + body.length()
                    + "\r\n\r\n"
                    + body)
                .getBytes(UTF_8));
    return new BufferedReader(new InputStreamReader(socket.getInputStream(), UTF_8));
  }

  private BufferedReader openSession(int port, String sessionId) throws IOException {
    Socket socket = new Socket("127.0.0.1", port);
    sockets.add(socket);
    socket.setSoTimeout(10_000);
    OutputStream out = socket.getOutputStream();
    out.write(
        "POST /v1/session HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            .getBytes(UTF_8));
    byte[] line = ("{\"open\":{\"sessionId\":\"" + sessionId + "\"}}\n").getBytes(UTF_8);
    out.write((Integer.toHexString(line.length) + "\r\n").getBytes(UTF_8));
    out.write(line);
    out.write("\r\n".getBytes(UTF_8));
    out.flush();
    return new BufferedReader(new InputStreamReader(socket.getInputStream(), UTF_8));
  }

  private static String firstJsonLine(BufferedReader in) throws IOException {
    for (String line; (line = in.readLine()) != null; ) {
      if (line.startsWith("{")) {
        return line;
      }
    }
    return "";
  }

  /** The rest of an answer that closes its connection. */
  private static String rest(BufferedReader in) throws IOException {
    StringBuilder all = new StringBuilder();
    for (String line; (line = in.readLine()) != null; ) {
      all.append(line).append('\n');
    }
    return all.toString();
  }

  private boolean leads() {
    try {
      RaftServer.Division d = server.raftServer().getDivision(RaftConfig.groupId(server.config()));
      return d.getInfo().isLeader() && d.getInfo().isLeaderReady();
    } catch (IOException e) {
      return false;
    }
  }
}
