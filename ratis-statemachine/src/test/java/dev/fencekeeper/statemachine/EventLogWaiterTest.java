package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.core.LeaseEvent;
import dev.fencekeeper.core.LeaseEvent.Type;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.WatchRequest;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A queued acquire's watch wakes on what concerns it, not on every grant of its resource. */
class EventLogWaiterTest {
  private static LeaseEvent acquired(String requestId) {
    return new LeaseEvent(Type.ACQUIRED, "r", 7, "o", 2_000, 1_000, requestId);
  }

  private static LeaseEvent released() {
    return new LeaseEvent(Type.RELEASED, "r", 6, "o", 1_000, 1_000);
  }

  // Guarantee: a waiter's watch sleeps through another waiter's grant and wakes on its own, with
  // every event after its position; a plain watch wakes on the first.
  @Test
  void waiterWakesOnItsOwnGrantOnly() throws Exception {
    try (EventLog log = new EventLog(1_000)) {
      WatchRequest base =
          WatchRequest.newBuilder().setResource("r").setAfterIndex(1).setTimeoutMs(60_000).build();
      CompletableFuture<Response> waiter =
          log.watch(base.toBuilder().setWaiterRequestId("me").build());
      CompletableFuture<Response> plain = log.watch(base);

      log.append(2, List.of(released(), acquired("other")));
      assertThat(plain.get(10, TimeUnit.SECONDS).getEventsCount()).isEqualTo(2);
      assertThat(waiter).isNotDone();

      log.append(3, List.of(released(), acquired("me")));
      Response woken = waiter.get(10, TimeUnit.SECONDS);
      assertThat(woken.getCode()).isEqualTo(ResultCode.FOUND);
      assertThat(woken.getEventsList())
          .extracting(e -> e.getIndex() + "/" + e.getRequestId())
          .containsExactly("2/", "2/other", "3/", "3/me");
    }
  }

  // Guarantee: a lease that ends with no grant after it wakes every waiter (it may have been
  // skipped).
  @Test
  void endWithoutGrantWakesTheWaiter() throws Exception {
    try (EventLog log = new EventLog(1_000)) {
      CompletableFuture<Response> waiter =
          log.watch(
              WatchRequest.newBuilder()
                  .setResource("r")
                  .setAfterIndex(1)
                  .setTimeoutMs(60_000)
                  .setWaiterRequestId("me")
                  .build());
      log.append(2, List.of(released()));
      assertThat(waiter.get(10, TimeUnit.SECONDS).getEventsCount()).isEqualTo(1);
    }
  }
}
