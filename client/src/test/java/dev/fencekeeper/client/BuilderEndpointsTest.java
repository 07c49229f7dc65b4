package dev.fencekeeper.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.config.PeerAddress;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The builder names a cluster by its client endpoints, and refuses Raft addresses there. */
class BuilderEndpointsTest {

  // Guarantee: endpoints are the addresses the client connects to, as given.
  @Test
  void endpointsAreWhereTheClientConnects() {
    try (FencingClient client =
        FencingClient.builder()
            .endpoints(List.of("127.0.0.1:7501", "127.0.0.1:7602"))
            .closeTimeout(Duration.ofMillis(100))
            .build()) {
      assertThat(client.config().clientAddresses().stream().map(PeerAddress::address))
          .containsExactly("127.0.0.1:7501", "127.0.0.1:7602");
      assertThat(client.config().peers()).isEmpty();
    }
  }

  // Guarantee: a Raft address where an endpoint belongs fails at build, before any connection,
  // with the client port to use.
  @Test
  void aRaftAddressIsRefusedAtOnceWithTheClientPort() {
    assertThatThrownBy(
            () -> FencingClient.builder().endpoints("n1@127.0.0.1:7301,n2@127.0.0.1:7302").build())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("is a Raft peer address")
        .hasMessageContaining("127.0.0.1:7501");
    assertThatThrownBy(() -> FencingClient.builder().endpoints(List.of()))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
