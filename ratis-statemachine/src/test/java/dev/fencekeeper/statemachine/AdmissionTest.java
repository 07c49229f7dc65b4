package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.config.Limits;
import dev.fencekeeper.core.FencingState;
import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.statemachine.proto.InternalRequest;
import dev.fencekeeper.statemachine.proto.LoggedCommand;
import dev.fencekeeper.statemachine.proto.Takeover;
import dev.fencekeeper.statemachine.proto.Tick;
import java.io.IOException;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.statemachine.TransactionContext;
import org.junit.jupiter.api.Test;

/**
 * One way into the log on a node: its leader logs what its own client port and its own duties
 * propose, stamped with its time, and refuses anything else before the log.
 */
class AdmissionTest {
  private static final long T0 = 1_700_000_000_000L;
  private final FencingStateMachine leader = new FencingStateMachine(Limits.defaults(), () -> T0);
  private final AsClientPort port = new AsClientPort(leader);
  private final ClientId internal = ClientId.randomId();

  AdmissionTest() {
    leader.setInternalClientId(internal);
    leader.setClientAddress("127.0.0.1:7501");
  }

  // Guarantee: a command under any client id but the node's client port's and its own (what a
  // Ratis client would use, were one let through to the Raft server) is refused before the log,
  // PERMISSION_DENIED, naming the client port as the way in; an internal request under such an id
  // is refused the same way.
  @Test
  void aCommandFromAnyOtherClientIsRefusedBeforeTheLog() {
    byte[] acquire = acquire().toByteArray();
    byte[] tick =
        InternalRequest.newBuilder().setTick(Tick.getDefaultInstance()).build().toByteArray();
    for (byte[] content : new byte[][] {acquire, tick}) {
      TransactionContext trx = leader.startTransaction(port.request(ClientId.randomId(), content));

      assertThat(trx.getException())
          .isInstanceOf(IOException.class)
          .hasMessageStartingWith("PERMISSION_DENIED: ")
          .hasMessageContaining("only through a node's client port");
    }
  }

  // Guarantee: a client-port command is logged exactly as the port queued it, marked as carrying
  // its callers inside, with the leader's time.
  @Test
  void aClientPortCommandIsLoggedAsQueuedWithTheLeadersTime() throws IOException {
    Request request = acquire();

    TransactionContext trx = port.start(request);

    assertThat(trx.getException()).isNull();
    LoggedCommand logged = logged(trx);
    assertThat(logged.getClientRequest()).isEqualTo(request.toByteString());
    assertThat(logged.getInnerCallers()).isTrue();
    assertThat(logged.getStampMs()).isEqualTo(T0);
  }

  // Guarantee: the node's own takeover is logged with its lineage and client address, its tick as
  // a tick; an internal request that does not decode, or carries nothing, is refused
  // INVALID_ARGUMENT.
  @Test
  void theNodesOwnEntriesAreStampedAndMalformedOnesRefused() throws IOException {
    LoggedCommand takeover =
        logged(
            leader.startTransaction(
                port.request(
                    internal,
                    InternalRequest.newBuilder()
                        .setTakeover(Takeover.getDefaultInstance())
                        .build()
                        .toByteArray())));
    assertThat(takeover.getTakeover().getLineage()).isEqualTo(leader.read(FencingState::lineage));
    assertThat(takeover.getTakeover().getClientAddress()).isEqualTo("127.0.0.1:7501");
    assertThat(
            logged(
                    leader.startTransaction(
                        port.request(
                            internal,
                            InternalRequest.newBuilder()
                                .setTick(Tick.getDefaultInstance())
                                .build()
                                .toByteArray())))
                .hasTick())
        .isTrue();

    for (byte[] bad : new byte[][] {{(byte) 0xff}, new byte[0]}) {
      assertThat(leader.startTransaction(port.request(internal, bad)).getException())
          .hasMessageStartingWith("INVALID_ARGUMENT: ");
    }
  }

  private static LoggedCommand logged(TransactionContext trx) throws IOException {
    assertThat(trx.getException()).isNull();
    return LoggedCommand.parseFrom(trx.getStateMachineLogEntry().getLogData().toByteArray());
  }

  private static Request acquire() {
    return Request.newBuilder()
        .setAcquire(AcquireRequest.newBuilder().setResource("r").setOwner("o").setTtlMs(10_000))
        .setCaller("alice")
        .build();
  }
}
