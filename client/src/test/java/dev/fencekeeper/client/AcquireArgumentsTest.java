package dev.fencekeeper.client;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** An acquire that cannot be sent fails at once, naming the argument, before anything is sent. */
@Timeout(10)
class AcquireArgumentsTest {
  // Nothing listens here: a call that went out would wait for the unreachable timeout.
  private static FencingClient client() {
    return FencingClient.builder()
        .peers("127.0.0.1:1,127.0.0.1:2,127.0.0.1:3")
        .unreachableTimeout(Duration.ofSeconds(30))
        .build();
  }

  // Guarantee: a null TTL, resource or wait fails at once with an exception naming it.
  @Test
  void nullArgumentsFailAtOnce() {
    try (FencingClient client = client()) {
      assertThatThrownBy(() -> client.acquire("r", null, "owner"))
          .isInstanceOf(NullPointerException.class)
          .hasMessageContaining("ttl");
      assertThatThrownBy(() -> client.acquire(null, Duration.ofSeconds(5)))
          .isInstanceOf(NullPointerException.class)
          .hasMessageContaining("resource");
      assertThatThrownBy(() -> client.tryAcquire("r", null))
          .isInstanceOf(NullPointerException.class)
          .hasMessageContaining("ttl");
      assertThatThrownBy(() -> client.acquire("r", Duration.ofSeconds(5), (Duration) null))
          .isInstanceOf(NullPointerException.class)
          .hasMessageContaining("waitTimeout");
    }
  }
}
