package dev.fencekeeper.client.wire;

import dev.fencekeeper.proto.LeaseEvent;
import java.util.List;

/**
 * Which lease events may change the answer to a queued acquire. A queued client watches its
 * resource and re-sends its acquire (a log entry) to learn of its grant; if every waiter did so on
 * every event, each grant would cost one log entry and one wake-up per waiter. The node filters a
 * waiter's watch with this, and the client filters again for nodes that predate the filter.
 */
public final class WaiterWakeups {
  private WaiterWakeups() {}

  /**
   * True for the waiter's own grant, a grant that names no request id (an event recorded without
   * one), or a lease that ended with no grant after it (the line was empty, or this waiter was
   * skipped and must ask again to be queued).
   */
  public static boolean mayConcern(List<LeaseEvent> events, String requestId) {
    boolean freed = false;
    for (LeaseEvent event : events) {
      switch (event.getType()) {
        case ACQUIRED -> {
          if (event.getRequestId().isEmpty() || event.getRequestId().equals(requestId)) {
            return true;
          }
          freed = false;
        }
        case RELEASED, EXPIRED, REVOKED -> freed = true;
        default -> {}
      }
    }
    return freed;
  }
}
