package dev.fencekeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.config.Security;
import dev.fencekeeper.metrics.StateMachineMetrics;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.apache.ratis.proto.grpc.RaftServerProtocolServiceGrpc;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerCallHandler;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** On the Raft port only the cluster's nodes may speak the peers' protocols. */
class CallerGateTest {
  @TempDir Path dir;

  // Guarantee: under TLS, a caller whose certificate does not name one of authz.nodes (here: no
  // certificate at all) is refused PERMISSION_DENIED on the server-to-server protocol and on the
  // nodes' introductions, and the call never reaches Ratis; without TLS nothing is refused.
  @Test
  void onlyNodesSpeakThePeersProtocols() throws Exception {
    CallerGate tls = new CallerGate(withTls(), StateMachineMetrics.NONE);
    for (String service :
        new String[] {RaftServerProtocolServiceGrpc.SERVICE_NAME, PeerIntroductions.SERVICE}) {
      FakeCall call = new FakeCall(service);
      boolean[] reached = {false};
      tls.interceptCall(call, new Metadata(), handler(reached));
      assertThat(reached[0]).as(service).isFalse();
      assertThat(call.closedWith.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
      assertThat(call.closedWith.getDescription()).contains("authz.nodes");

      FakeCall plaintext = new FakeCall(service);
      boolean[] passed = {false};
      new CallerGate(Security.none(), StateMachineMetrics.NONE)
          .interceptCall(plaintext, new Metadata(), handler(passed));
      assertThat(passed[0]).isTrue();
      assertThat(plaintext.closedWith).isNull();
    }
  }

  private Security withTls() throws Exception {
    Path cert = Files.writeString(dir.resolve("node.crt"), "");
    Path key = Files.writeString(dir.resolve("node.key"), "");
    Path trust = Files.writeString(dir.resolve("ca.crt"), "");
    return new Security(
        new Security.TlsFiles(cert, key, trust), Set.of("fencekeeper-admin"), Set.of("node-cn"));
  }

  private static ServerCallHandler<byte[], byte[]> handler(boolean[] reached) {
    return (call, headers) -> {
      reached[0] = true;
      return new ServerCall.Listener<>() {};
    };
  }

  private static final class FakeCall extends ServerCall<byte[], byte[]> {
    private final MethodDescriptor<byte[], byte[]> method;
    Status closedWith;

    FakeCall(String service) {
      MethodDescriptor.Marshaller<byte[]> bytes =
          new MethodDescriptor.Marshaller<>() {
            @Override
            public InputStream stream(byte[] value) {
              return new ByteArrayInputStream(value);
            }

            @Override
            public byte[] parse(InputStream stream) {
              return new byte[0];
            }
          };
      this.method =
          MethodDescriptor.<byte[], byte[]>newBuilder()
              .setType(MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(MethodDescriptor.generateFullMethodName(service, "call"))
              .setRequestMarshaller(bytes)
              .setResponseMarshaller(bytes)
              .build();
    }

    @Override
    public void request(int numMessages) {}

    @Override
    public void sendHeaders(Metadata headers) {}

    @Override
    public void sendMessage(byte[] message) {}

    @Override
    public void close(Status status, Metadata trailers) {
      closedWith = status;
    }

    @Override
    public boolean isCancelled() {
      return false;
    }

    @Override
    public MethodDescriptor<byte[], byte[]> getMethodDescriptor() {
      return method;
    }
  }
}
