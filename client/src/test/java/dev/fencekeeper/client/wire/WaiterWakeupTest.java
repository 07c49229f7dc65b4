package dev.fencekeeper.client.wire;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.proto.LeaseEvent;
import dev.fencekeeper.proto.LeaseEvent.Type;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Which lease events make a queued acquire ask the cluster again. Only those that can change its
 * answer may: with every waiter re-sending on every grant, a contended resource spent one log entry
 * per waiter per grant.
 */
class WaiterWakeupTest {
  private static LeaseEvent event(Type type, String requestId) {
    return LeaseEvent.newBuilder().setType(type).setResource("r").setRequestId(requestId).build();
  }

  // Guarantee: a waiter is woken by its own grant, and not by another waiter's.
  @Test
  void ownGrantWakesAndOthersDoNot() {
    assertThat(
            WaiterWakeups.mayConcern(
                List.of(event(Type.RELEASED, ""), event(Type.ACQUIRED, "me")), "me"))
        .isTrue();
    assertThat(
            WaiterWakeups.mayConcern(
                List.of(event(Type.RELEASED, ""), event(Type.ACQUIRED, "other")), "me"))
        .isFalse();
    assertThat(WaiterWakeups.mayConcern(List.of(event(Type.RENEWED, "")), "me")).isFalse();
  }

  // Guarantee: a lease that ended with no grant after it wakes the waiter (it may have been skipped
  // and must queue again), and so does a grant naming no request id (an event recorded without
  // one).
  @Test
  void endWithoutGrantAndUnnamedGrantWake() {
    assertThat(
            WaiterWakeups.mayConcern(
                List.of(event(Type.ACQUIRED, "other"), event(Type.EXPIRED, "")), "me"))
        .isTrue();
    assertThat(WaiterWakeups.mayConcern(List.of(event(Type.REVOKED, "")), "me")).isTrue();
    assertThat(WaiterWakeups.mayConcern(List.of(event(Type.ACQUIRED, "")), "me")).isTrue();
  }
}
