package dev.fencekeeper.server;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.statemachine.proto.Introduction;
import dev.fencekeeper.statemachine.proto.IntroductionReply;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.grpc.GrpcUtil;
import org.apache.ratis.thirdparty.io.grpc.CallOptions;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;
import org.apache.ratis.thirdparty.io.grpc.ServerServiceDefinition;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyChannelBuilder;
import org.apache.ratis.thirdparty.io.grpc.protobuf.ProtoUtils;
import org.apache.ratis.thirdparty.io.grpc.stub.ClientCalls;
import org.apache.ratis.thirdparty.io.grpc.stub.ServerCalls;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Nodes of one cluster tell each other their cluster id over their Raft ports: a node asks every
 * configured peer before it starts its Raft server ({@link StartCheck}), and a running node that
 * knows no id yet asks until one answers with it. A node that answers learns the asker's id in
 * return: an asker presenting the answerer's own cluster id is recorded as a member that holds the
 * log. Under TLS only {@code authz.nodes} may call ({@link CallerGate}).
 */
final class PeerIntroductions {
  private static final Logger LOG = LoggerFactory.getLogger(PeerIntroductions.class);

  /** The service on the Raft port, next to Ratis's own. */
  static final String SERVICE = "fencekeeper.internal.v1.Peers";

  private static final MethodDescriptor<Introduction, IntroductionReply> INTRODUCE =
      MethodDescriptor.<Introduction, IntroductionReply>newBuilder()
          .setType(MethodDescriptor.MethodType.UNARY)
          .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "Introduce"))
          .setRequestMarshaller(ProtoUtils.marshaller(Introduction.getDefaultInstance()))
          .setResponseMarshaller(ProtoUtils.marshaller(IntroductionReply.getDefaultInstance()))
          .build();

  private PeerIntroductions() {}

  /** The service answering introductions for node {@code self} from {@code identity}. */
  static ServerServiceDefinition service(String self, ClusterIdentity identity) {
    return ServerServiceDefinition.builder(SERVICE)
        .addMethod(
            INTRODUCE,
            ServerCalls.asyncUnaryCall(
                (request, reply) -> {
                  reply.onNext(answer(self, identity, request));
                  reply.onCompleted();
                }))
        .build();
  }

  static IntroductionReply answer(String self, ClusterIdentity identity, Introduction request) {
    String mine = identity.clusterId().orElse("");
    if (!mine.isEmpty() && mine.equals(request.getClusterId())) {
      try {
        identity.see(request.getNodeId());
      } catch (IOException e) {
        LOG.warn("Could not record that {} holds cluster {}: {}", request.getNodeId(), mine, e);
      }
    }
    return IntroductionReply.newBuilder()
        .setNodeId(self)
        .setClusterId(mine)
        .setKnowsAsker(!mine.isEmpty() && identity.hasSeen(request.getNodeId()))
        .build();
  }

  /**
   * Introduces node {@code config.self()} with {@code clusterId} (empty: none) to every other peer
   * of {@code config}, all at once, and returns the answers that came within {@code timeout}; a
   * peer that is down or does not answer is left out.
   */
  static List<StartCheck.Answer> introduce(
      ClusterConfig config, GrpcTlsConfig tls, String clusterId, Duration timeout) {
    String self = config.self().id();
    Introduction request =
        Introduction.newBuilder().setNodeId(self).setClusterId(clusterId).build();
    List<ManagedChannel> channels = new ArrayList<>();
    List<PeerAddress> asked = new ArrayList<>();
    List<Future<IntroductionReply>> replies = new ArrayList<>();
    try {
      for (PeerAddress peer : config.peers()) {
        if (peer.id().equals(self)) {
          continue;
        }
        ManagedChannel channel = channel(peer, tls);
        channels.add(channel);
        asked.add(peer);
        replies.add(
            ClientCalls.futureUnaryCall(
                channel.newCall(
                    INTRODUCE,
                    CallOptions.DEFAULT.withDeadlineAfter(
                        timeout.toMillis(), TimeUnit.MILLISECONDS)),
                request));
      }
      List<StartCheck.Answer> answers = new ArrayList<>();
      long until = System.nanoTime() + timeout.toNanos();
      for (int i = 0; i < replies.size(); i++) {
        PeerAddress peer = asked.get(i);
        try {
          long left = Math.max(0, until - System.nanoTime());
          IntroductionReply r = replies.get(i).get(left, TimeUnit.NANOSECONDS);
          answers.add(new StartCheck.Answer(peer.id(), r.getClusterId(), r.getKnowsAsker()));
        } catch (ExecutionException | TimeoutException e) {
          LOG.debug(
              "{}: peer {} did not answer its introduction: {}", self, peer.id(), e.toString());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
      return answers;
    } finally {
      channels.forEach(ManagedChannel::shutdownNow);
    }
  }

  private static ManagedChannel channel(PeerAddress peer, GrpcTlsConfig tls) {
    NettyChannelBuilder b = NettyChannelBuilder.forAddress(peer.host(), peer.port());
    if (tls == null) {
      b.usePlaintext();
    } else {
      b.sslContext(GrpcUtil.buildSslContextForClient(tls));
    }
    return b.build();
  }
}
