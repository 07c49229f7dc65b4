package dev.fencekeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.Request;
import java.util.List;
import org.apache.ratis.client.impl.OrderedAsync;
import org.apache.ratis.proto.RaftProtos.ClientMessageEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftClientRequestProto;
import org.apache.ratis.proto.RaftProtos.ReadRequestTypeProto;
import org.apache.ratis.proto.RaftProtos.StaleReadRequestTypeProto;
import org.apache.ratis.proto.RaftProtos.WatchRequestTypeProto;
import org.apache.ratis.proto.RaftProtos.WriteRequestTypeProto;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;

/**
 * The caller a node stamps into a request is the one apply sees, whatever the client wrote there.
 */
class CallerGateTest {
  @Test
  void theStampedCallerOverridesWhatTheClientClaimed() throws Exception {
    Request claimed =
        Request.newBuilder()
            .setAcquire(AcquireRequest.newBuilder().setResource("r").setTtlMs(1000))
            .setCaller("fencekeeper-admin")
            .build();
    assertThat(callerAfterStamp(claimed, "fencekeeper-client")).isEqualTo("fencekeeper-client");
    // Without TLS the stamp is empty, and empty still overrides: nobody can claim an identity in
    // plaintext.
    assertThat(callerAfterStamp(claimed, "")).isEmpty();
  }

  @Test
  void theRestOfTheRequestIsUntouched() throws Exception {
    Request sent =
        Request.newBuilder()
            .setAcquire(AcquireRequest.newBuilder().setResource("r").setTtlMs(1000))
            .build();
    Request seen = Request.parseFrom(stamp(sent, "someone").toByteArray());
    assertThat(seen.toBuilder().clearCaller().build()).isEqualTo(sent);
  }

  @Test
  void staleReadsAreStampedLikeEveryRead() throws Exception {
    RaftClientRequestProto stale =
        RaftClientRequestProto.newBuilder()
            .setStaleRead(StaleReadRequestTypeProto.getDefaultInstance())
            .setMessage(
                ClientMessageEntryProto.newBuilder()
                    .setContent(
                        ByteString.copyFrom(
                            Request.newBuilder()
                                .setCaller("fencekeeper-admin")
                                .build()
                                .toByteArray())))
            .build();
    assertThat(
            Request.parseFrom(
                    CallerGate.stamp(stale, "someone").getMessage().getContent().toByteArray())
                .getCaller())
        .isEqualTo("someone");
  }

  // Ratis answers its own probe at once only while the content is exactly DUMMY; stamped, a node
  // that is not leader would fail it, and every request queued behind it on that stream would wait
  // forever.
  @Test
  void ratisOwnDummyPassesAsItCame() {
    for (RaftClientRequestProto dummy :
        List.of(
            RaftClientRequestProto.newBuilder()
                .setWatch(WatchRequestTypeProto.getDefaultInstance())
                .setMessage(
                    ClientMessageEntryProto.newBuilder()
                        .setContent(OrderedAsync.DUMMY.getContent()))
                .build(),
            RaftClientRequestProto.newBuilder()
                .setRead(ReadRequestTypeProto.getDefaultInstance())
                .setMessage(
                    ClientMessageEntryProto.newBuilder()
                        .setContent(OrderedAsync.DUMMY.getContent()))
                .build())) {
      assertThat(CallerGate.stamp(dummy, "someone")).isSameAs(dummy);
    }
  }

  // The read bound's verdict is the node's, whatever the client wrote into read_overloaded.
  @Test
  void theReadVerdictOverridesWhatTheClientClaimed() throws Exception {
    for (boolean claimed : new boolean[] {false, true}) {
      RaftClientRequestProto read =
          RaftClientRequestProto.newBuilder()
              .setRead(ReadRequestTypeProto.getDefaultInstance())
              .setMessage(
                  ClientMessageEntryProto.newBuilder()
                      .setContent(
                          ByteString.copyFrom(
                              Request.newBuilder()
                                  .setReadOverloaded(claimed)
                                  .build()
                                  .toByteArray())))
              .build();
      for (boolean verdict : new boolean[] {false, true}) {
        Request seen =
            Request.parseFrom(
                CallerGate.stampRead(read, "someone", verdict)
                    .getMessage()
                    .getContent()
                    .toByteArray());
        assertThat(seen.getReadOverloaded()).isEqualTo(verdict);
        assertThat(seen.getCaller()).isEqualTo("someone");
      }
    }
  }

  private static String callerAfterStamp(Request request, String caller) throws Exception {
    return Request.parseFrom(stamp(request, caller).toByteArray()).getCaller();
  }

  private static ByteString stamp(Request request, String caller) {
    RaftClientRequestProto proto =
        RaftClientRequestProto.newBuilder()
            .setWrite(WriteRequestTypeProto.getDefaultInstance())
            .setMessage(
                ClientMessageEntryProto.newBuilder()
                    .setContent(ByteString.copyFrom(request.toByteArray())))
            .build();
    return CallerGate.stamp(proto, caller).getMessage().getContent();
  }
}
