package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.config.Limits;
import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.Request;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.ratis.statemachine.TransactionContext;
import org.junit.jupiter.api.Test;

/**
 * The leader's expiry ticker sleeps until the earliest deadline it saw; apply tells it when an
 * entry moves that deadline earlier.
 */
class DeadlineMovedTest {
  private static final long T0 = 1_700_000_000_000L;
  private final FencingStateMachine leader = new FencingStateMachine(Limits.defaults(), () -> T0);
  private final AsClientPort port = new AsClientPort(leader);
  private final List<Long> moved = new CopyOnWriteArrayList<>();
  private long index;

  // Guarantee: an applied grant whose deadline is earlier than every other is reported with that
  // deadline; one that ends later than the earliest is not reported.
  @Test
  void anEntryThatMovesTheEarliestDeadlineEarlierIsReported() {
    leader.setLeaderDuties(
        new LeaderDuties() {
          @Override
          public void onLeaderReady() {}

          @Override
          public void onNotLeader() {}

          @Override
          public void deadlineMovedEarlier(long deadlineMs) {
            moved.add(deadlineMs);
          }
        });

    apply(acquire("long", 30_000));
    assertThat(moved).containsExactly(T0 + 30_000);
    apply(acquire("short", 1_000));
    assertThat(moved).containsExactly(T0 + 30_000, T0 + 1_000);
    apply(acquire("middle", 10_000));
    assertThat(moved).hasSize(2);
    assertThat(leader.nextExpiryMs()).isEqualTo(T0 + 1_000);
  }

  private void apply(Request request) {
    TransactionContext trx = port.start(request);
    trx.initLogEntry(1, ++index);
    leader.applyTransaction(trx).join();
  }

  private static Request acquire(String resource, long ttlMs) {
    return Request.newBuilder()
        .setAcquire(AcquireRequest.newBuilder().setResource(resource).setOwner("o").setTtlMs(ttlMs))
        .build();
  }
}
