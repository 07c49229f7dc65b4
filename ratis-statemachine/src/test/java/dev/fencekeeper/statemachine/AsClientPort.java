package dev.fencekeeper.statemachine;

import dev.fencekeeper.proto.Request;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

/**
 * Hands requests to a state machine's {@code startTransaction} as a node's client port does through
 * {@code LocalRaft}: under the client id the state machine knows as its client port's, with a call
 * id that only grows. No servers: tests of the state machine's rules drive it on the leader's side
 * with this, and apply the entries themselves.
 */
final class AsClientPort {
  private final FencingStateMachine stateMachine;
  private final ClientId clientId = ClientId.randomId();
  private final RaftGroupId group = RaftGroupId.randomId();
  private long callId;

  /** The client port of the node whose state machine is {@code stateMachine}. */
  AsClientPort(FencingStateMachine stateMachine) {
    this.stateMachine = stateMachine;
    stateMachine.setClientPortId(clientId);
  }

  /** Starts the transaction for {@code request}, a command with its caller stamped. */
  TransactionContext start(Request request) {
    return stateMachine.startTransaction(request(clientId, request.toByteArray()));
  }

  /** A write request from {@code from} carrying {@code content}, as Ratis hands it over. */
  RaftClientRequest request(ClientId from, byte[] content) {
    return RaftClientRequest.newBuilder()
        .setClientId(from)
        .setServerId(RaftPeerId.valueOf("n1"))
        .setGroupId(group)
        .setCallId(++callId)
        .setMessage(Message.valueOf(UnsafeByteOperations.unsafeWrap(content)))
        .setType(RaftClientRequest.writeRequestType())
        .build();
  }
}
