package dev.fencekeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.Request;
import org.apache.ratis.proto.RaftProtos.ClientMessageEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftClientRequestProto;
import org.apache.ratis.proto.RaftProtos.ReadRequestTypeProto;
import org.apache.ratis.proto.RaftProtos.StaleReadRequestTypeProto;
import org.apache.ratis.proto.RaftProtos.WriteRequestTypeProto;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;

/** The caller a node stamps into a request is the one apply sees, whatever the client wrote there. */
class CallerGateTest {
  @Test
  void theStampedCallerOverridesWhatTheClientClaimed() throws Exception {
    Request claimed = Request.newBuilder()
        .setAcquire(AcquireRequest.newBuilder().setResource("r").setTtlMs(1000))
        .setCaller("fencekeeper-admin")
        .build();
    assertThat(callerAfterStamp(claimed, "fencekeeper-client")).isEqualTo("fencekeeper-client");
    // Without TLS the stamp is empty, and empty still overrides: nobody can claim an identity in plaintext.
    assertThat(callerAfterStamp(claimed, "")).isEmpty();
  }

  @Test
  void theRestOfTheRequestIsUntouched() throws Exception {
    Request sent = Request.newBuilder().setAcquire(AcquireRequest.newBuilder().setResource("r").setTtlMs(1000)).build();
    Request seen = Request.parseFrom(stamp(sent, "someone").toByteArray());
    assertThat(seen.toBuilder().clearCaller().build()).isEqualTo(sent);
  }

  @Test
  void staleReadsAndRatisOwnEmptyMessagesPassAsTheyCame() {
    RaftClientRequestProto stale = RaftClientRequestProto.newBuilder()
        .setStaleRead(StaleReadRequestTypeProto.getDefaultInstance())
        .setMessage(ClientMessageEntryProto.newBuilder().setContent(ByteString.copyFromUtf8("x")))
        .build();
    assertThat(CallerGate.stamp(stale, "someone")).isSameAs(stale);
    RaftClientRequestProto emptyRead = RaftClientRequestProto.newBuilder()
        .setRead(ReadRequestTypeProto.getDefaultInstance()).build();
    assertThat(CallerGate.stamp(emptyRead, "someone")).isSameAs(emptyRead);
  }

  private static String callerAfterStamp(Request request, String caller) throws Exception {
    return Request.parseFrom(stamp(request, caller).toByteArray()).getCaller();
  }

  private static ByteString stamp(Request request, String caller) {
    RaftClientRequestProto proto = RaftClientRequestProto.newBuilder()
        .setWrite(WriteRequestTypeProto.getDefaultInstance())
        .setMessage(ClientMessageEntryProto.newBuilder().setContent(ByteString.copyFrom(request.toByteArray())))
        .build();
    return CallerGate.stamp(proto, caller).getMessage().getContent();
  }
}
