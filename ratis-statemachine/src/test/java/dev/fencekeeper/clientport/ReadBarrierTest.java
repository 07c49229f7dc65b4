package dev.fencekeeper.clientport;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.junit.jupiter.api.Test;

class ReadBarrierTest {
  /** The barrier entries proposed so far, each completed by the test. */
  private final List<CompletableFuture<RaftClientReply>> proposed = new ArrayList<>();

  private final ReadBarrier barrier =
      new ReadBarrier(
          () -> {
            CompletableFuture<RaftClientReply> entry = new CompletableFuture<>();
            proposed.add(entry);
            return entry;
          });

  // Guarantee: a read passes only on an entry proposed after it arrived, never on one already in
  // flight.
  @Test
  void aReadArrivingWhileABarrierIsInFlightWaitsForTheNext() {
    CompletableFuture<Boolean> first = barrier.pass();
    CompletableFuture<Boolean> second = barrier.pass();
    assertThat(proposed).hasSize(1);

    proposed.get(0).complete(reply(true));

    assertThat(first).isCompletedWithValue(true);
    assertThat(second).isNotDone();
    assertThat(proposed).as("the next barrier is proposed at once").hasSize(2);
    proposed.get(1).complete(reply(true));
    assertThat(second).isCompletedWithValue(true);
  }

  // Guarantee: reads waiting together share one entry, and a quiet barrier proposes nothing.
  @Test
  void readsWaitingTogetherShareOneEntry() {
    barrier.pass();
    List<CompletableFuture<Boolean>> waiting = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      waiting.add(barrier.pass());
    }
    proposed.get(0).complete(reply(true));
    proposed.get(1).complete(reply(true));

    assertThat(waiting).allSatisfy(read -> assertThat(read).isCompletedWithValue(true));
    assertThat(proposed).hasSize(2);
  }

  // Guarantee: an entry this node could not commit passes no read, and the next one is tried anew.
  @Test
  void aBarrierNotCommittedPassesNoRead() {
    CompletableFuture<Boolean> refused = barrier.pass();
    CompletableFuture<Boolean> failed = barrier.pass();
    proposed.get(0).complete(reply(false));
    assertThat(refused).isCompletedWithValue(false);

    proposed.get(1).completeExceptionally(new IllegalStateException("closing"));
    assertThat(failed).isCompletedWithValue(false);

    CompletableFuture<Boolean> later = barrier.pass();
    assertThat(proposed).hasSize(3);
    proposed.get(2).complete(reply(true));
    assertThat(later).isCompletedWithValue(true);
  }

  // Guarantee: a proposal that throws passes no read and leaves the barrier usable.
  @Test
  void aProposalThatThrowsPassesNoRead() {
    boolean[] fail = {true};
    ReadBarrier throwing =
        new ReadBarrier(
            () -> {
              if (fail[0]) {
                throw new IllegalStateException("no server");
              }
              return CompletableFuture.completedFuture(reply(true));
            });
    assertThat(throwing.pass()).isCompletedWithValue(false);
    fail[0] = false;
    assertThat(throwing.pass()).isCompletedWithValue(true);
  }

  private static RaftClientReply reply(boolean success) {
    RaftGroupMemberId member =
        RaftGroupMemberId.valueOf(RaftPeerId.valueOf("n1"), RaftGroupId.randomId());
    RaftClientReply.Builder b =
        RaftClientReply.newBuilder()
            .setClientId(ClientId.randomId())
            .setServerId(member)
            .setCallId(1)
            .setSuccess(success)
            .setMessage(Message.EMPTY);
    if (!success) {
      b.setException(new NotLeaderException(member, null, List.of()));
    }
    return b.build();
  }
}
