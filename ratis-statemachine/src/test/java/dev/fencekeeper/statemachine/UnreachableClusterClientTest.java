package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.FencingException;
import dev.fencekeeper.client.ReadResult;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.testing.RefusingPorts;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** How soon a call gives up when nothing answers, and that an election still gets its time. */
@Timeout(120)
class UnreachableClusterClientTest {
  @TempDir Path dataDir;

  // Guarantee: with every peer refusing the connection, a read is answered UNAVAILABLE within the
  // default bound (about 3 s, not the 15 s call timeout), in one line that says why.
  @Test
  void readFailsFastWhenEveryPeerRefuses() {
    try (RefusingPorts dead = RefusingPorts.open(3);
        FencingClient client = FencingClient.builder().peers(dead.peers()).build()) {
      long start = System.nanoTime();
      ReadResult r = client.read("r", "k");
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      assertThat(r.code()).isEqualTo(ResultCode.UNAVAILABLE);
      assertThat(r.message())
          .contains("no node reachable")
          .contains("connection refused")
          .doesNotContain("\n");
      assertThat(took).isLessThan(Duration.ofSeconds(8));
    }
  }

  // Guarantee: the same for a command, an acquire: it throws FencingException with UNAVAILABLE in
  // time.
  @Test
  void acquireFailsFastWhenEveryPeerRefuses() {
    try (RefusingPorts dead = RefusingPorts.open(3);
        FencingClient client =
            FencingClient.builder()
                .peers(dead.peers())
                .unreachableTimeout(Duration.ofSeconds(1))
                .build()) {
      long start = System.nanoTime();
      FencingException e =
          catchThrowableOfType(
              FencingException.class, () -> client.acquire("r", Duration.ofSeconds(5)));
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      assertThat(e.code()).isEqualTo(ResultCode.UNAVAILABLE);
      assertThat(took).isLessThan(Duration.ofSeconds(5));
    }
  }

  // Guarantee: a host that does not resolve counts as unreachable too.
  @Test
  void unknownHostFailsFast() {
    try (FencingClient client =
        FencingClient.builder()
            .peers(
                "no-such-host.invalid:7301,no-such-host-2.invalid:7302,no-such-host-3.invalid:7303")
            .build()) {
      long start = System.nanoTime();
      ReadResult r = client.read("r", "k");
      assertThat(r.code()).isEqualTo(ResultCode.UNAVAILABLE);
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(8));
    }
  }

  // Guarantee: a node that answers but cannot lead (no quorum: an election that cannot finish yet)
  // keeps a command waiting up to the call timeout instead of failing it at the unreachable bound.
  @Test
  void aNodeThatAnswersKeepsTheCallWaiting() {
    try (TestCluster cluster = TestCluster.start(dataDir)) {
      cluster.awaitLeader();
      cluster.stopNode("n2");
      cluster.stopNode("n3");
      try (FencingClient client =
          FencingClient.builder()
              .config(cluster.config())
              .unreachableTimeout(Duration.ofSeconds(1))
              .callTimeout(Duration.ofSeconds(6))
              .build()) {
        long start = System.nanoTime();
        FencingException e =
            catchThrowableOfType(
                FencingException.class, () -> client.acquire("r", Duration.ofSeconds(5)));
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(e.code()).isEqualTo(ResultCode.UNAVAILABLE);
        assertThat(took).isGreaterThanOrEqualTo(Duration.ofSeconds(5));
      }
    }
  }
}
