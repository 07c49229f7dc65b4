package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.ReadConsistency;
import dev.fencekeeper.client.ReadResult;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A verb's {@code --timeout} bounds its call, not the set-up of its connections: with every
 * endpoint behind a proxy that holds each new connection for longer than the timeout before passing
 * it on (as a cold process's TLS set-up on a loaded host does), a write and {@code status} still
 * get their answer, and the write is what the cluster stored.
 */
@Timeout(120)
class DeadlineAfterConnectTest {
  @RegisterExtension static final InProcessCluster cluster = InProcessCluster.perClass();

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration SET_UP = Duration.ofMillis(1500);

  private final List<SlowConnections> proxies = new ArrayList<>();

  @AfterEach
  void closeProxies() {
    proxies.forEach(SlowConnections::close);
  }

  // Guarantee: connecting is not counted against --timeout. Each connection takes 1.5 s to set up,
  // the timeout is 1 s, the call itself a few milliseconds: the write is ACCEPTED, exit 0, and
  // stored; status answers for every node. (With the deadline started before the connections were
  // set up, both printed UNAVAILABLE, exit 11.)
  @Test
  void aSlowConnectionSetUpIsNotCountedAgainstTheCallsTimeout() throws Exception {
    String endpoints =
        List.of(cluster.endpoints().split(",")).stream()
            .map(this::slowed)
            .collect(Collectors.joining(","));
    long token;
    try (FencingClient client = FencingClient.connect(cluster.config())) {
      token = client.acquireToken("slow-dial", Duration.ofMinutes(5), "test").token();

      CliRun write =
          CliRun.run(
              cluster.dataDir(),
              "write",
              "slow-dial",
              "k",
              "v",
              "--token",
              Long.toString(token),
              "--timeout",
              "1s",
              "--endpoints",
              endpoints,
              "--json");
      JsonNode written = JSON.readTree(write.out());
      assertThat(written.get("status").asText()).as(write.out()).isEqualTo("ACCEPTED");
      assertThat(write.exitCode()).as(write.out()).isZero();
      ReadResult stored = client.read("slow-dial", "k", ReadConsistency.LINEARIZABLE);
      assertThat(stored.valueAsString()).isEqualTo("v");
    }

    CliRun status =
        CliRun.run(
            cluster.dataDir(), "status", "--timeout", "1s", "--endpoints", endpoints, "--json");
    assertThat(status.exitCode()).as(status.out()).isZero();
    JsonNode nodes = JSON.readTree(status.out()).get("nodes");
    assertThat(nodes).as(status.out()).hasSize(3);
    nodes.forEach(n -> assertThat(n.path("term").asLong()).as(status.out()).isPositive());
  }

  private String slowed(String endpoint) {
    int colon = endpoint.lastIndexOf(':');
    SlowConnections proxy =
        new SlowConnections(
            new InetSocketAddress(
                endpoint.substring(0, colon), Integer.parseInt(endpoint.substring(colon + 1))));
    proxies.add(proxy);
    return "127.0.0.1:" + proxy.port();
  }

  /** Passes each connection on to {@code upstream} only {@link #SET_UP} after accepting it. */
  private static final class SlowConnections implements AutoCloseable {
    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    SlowConnections(InetSocketAddress upstream) {
      try {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      Thread accepting =
          new Thread(
              () -> {
                while (!server.isClosed()) {
                  try {
                    Socket downstream = server.accept();
                    sockets.add(downstream);
                    daemon(() -> pass(downstream, upstream));
                  } catch (IOException closed) {
                    return;
                  }
                }
              });
      accepting.setDaemon(true);
      accepting.start();
    }

    int port() {
      return server.getLocalPort();
    }

    private void pass(Socket downstream, InetSocketAddress upstream) {
      try {
        Thread.sleep(SET_UP.toMillis());
        Socket up = new Socket(upstream.getAddress(), upstream.getPort());
        sockets.add(up);
        daemon(() -> copy(downstream, up));
        copy(up, downstream);
      } catch (IOException | InterruptedException e) {
        closeQuietly(downstream);
      }
    }

    private static void copy(Socket from, Socket to) {
      try (InputStream in = from.getInputStream();
          OutputStream out = to.getOutputStream()) {
        in.transferTo(out);
      } catch (IOException ended) {
        // One side closed; the other follows.
      } finally {
        closeQuietly(from);
        closeQuietly(to);
      }
    }

    private static void daemon(Runnable task) {
      Thread t = new Thread(task);
      t.setDaemon(true);
      t.start();
    }

    private static void closeQuietly(Socket socket) {
      try {
        socket.close();
      } catch (IOException ignored) {
        // Already closed.
      }
    }

    @Override
    public void close() {
      try {
        server.close();
      } catch (IOException ignored) {
        // Already closed.
      }
      sockets.forEach(SlowConnections::closeQuietly);
    }
  }
}
