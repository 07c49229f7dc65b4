package dev.fencekeeper.client.fakenode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.FencingException;
import dev.fencekeeper.client.LeaseHeldException;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A node whose certificate the client does not trust. */
class TlsRefusalTest {
  private final TestIdentity nodeIdentity = TestIdentity.create("fake-node");
  private final TestIdentity clientIdentity = TestIdentity.create("client");
  private final FakeCluster cluster = new FakeCluster();
  private final FakeNode node = FakeNode.startTls(cluster, "n1", nodeIdentity.serverContext());

  @AfterEach
  void stop() {
    node.close();
    cluster.close();
  }

  private FencingClient clientTrusting(TestIdentity trusted) {
    return FencingClient.builder()
        .endpoints(node.address())
        .tls(clientIdentity.keyManager(), trusted.trustManager())
        .callTimeout(Duration.ofSeconds(15))
        .closeTimeout(Duration.ofSeconds(1))
        .build();
  }

  // Guarantee: a TLS handshake the client refuses (the node's certificate is not one it trusts)
  // ends the call at once, not at the call timeout, as PERMISSION_DENIED naming the cause and
  // saying nothing was applied; a lease acquire throws it as a FencingException.
  @Test
  void anUntrustedNodeIsRefusedAtOnceNamingTheCause() {
    try (FencingClient client = clientTrusting(TestIdentity.create("another-ca"))) {
      long start = System.nanoTime();
      Result r = client.acquireToken("r", Duration.ofSeconds(5), "me");
      long elapsedMs = (System.nanoTime() - start) / 1_000_000;

      assertThat(r.code()).isEqualTo(ResultCode.PERMISSION_DENIED);
      assertThat(r.message())
          .contains("not signed by a CA this client trusts")
          .contains("nothing was applied");
      assertThat(elapsedMs).as("refused at once").isLessThan(5_000);

      Throwable thrown = catchThrowable(() -> client.acquire("r", Duration.ofSeconds(5)));
      assertThat(thrown)
          .isInstanceOf(FencingException.class)
          .isNotInstanceOf(LeaseHeldException.class);
      assertThat(((FencingException) thrown).code()).isEqualTo(ResultCode.PERMISSION_DENIED);
      assertThat(node.calls()).as("nothing reached the node").isEmpty();
    }
  }

  // Guarantee (the control): the same node is reached by a client that trusts its certificate,
  // so the refusal above is the certificate's doing.
  @Test
  void aClientThatTrustsTheNodeReachesIt() {
    try (FencingClient client = clientTrusting(nodeIdentity)) {
      assertThat(client.acquireToken("r", Duration.ofSeconds(5), "me").code())
          .isEqualTo(ResultCode.GRANTED);
    }
  }
}
