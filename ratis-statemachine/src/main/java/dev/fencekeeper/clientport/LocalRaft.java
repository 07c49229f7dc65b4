package dev.fencekeeper.clientport;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * This node's own Raft server, reached in-process: commands are submitted to it as Ratis's gRPC
 * service would hand them over ({@link RaftServer#submitClientRequestAsync}), without a client, a
 * channel or a second serialization.
 *
 * <p>Every request carries this node's own client id and a call id that only grows, so Ratis's
 * retry cache (keyed by both) never mistakes one for another; retries of a client's command are new
 * calls, and their exactly-once rests on the request ids the state machine records.
 */
final class LocalRaft {
  private final RaftServer server;
  private final RaftGroupId groupId;
  private final RaftPeerId self;
  private final ClientId clientId;
  private final AtomicLong callIds = new AtomicLong();

  LocalRaft(RaftServer server, RaftGroupId groupId, RaftPeerId self, ClientId clientId) {
    this.server = server;
    this.groupId = groupId;
    this.self = self;
    this.clientId = clientId;
  }

  /** Who leads as this node sees it: itself (ready to serve or not), another member, or nobody. */
  record Leadership(boolean leaderReady, boolean leader, String leaderId, long term) {
    static final Leadership UNKNOWN = new Leadership(false, false, "", 0);
  }

  Leadership leadership() {
    try {
      RaftServer.Division d = server.getDivision(groupId);
      RaftPeerId leader = d.getInfo().getLeaderId();
      boolean leads = d.getInfo().isLeader();
      return new Leadership(
          leads && d.getInfo().isLeaderReady(),
          leads,
          leader == null ? "" : leader.toString(),
          d.getInfo().getCurrentTerm());
    } catch (IOException | RuntimeException e) {
      return Leadership.UNKNOWN;
    }
  }

  String selfId() {
    return self.toString();
  }

  /** The last entry applied here. */
  long appliedIndex() {
    try {
      TermIndex applied = server.getDivision(groupId).getStateMachine().getLastAppliedTermIndex();
      return applied == null ? 0 : applied.getIndex();
    } catch (IOException e) {
      return 0;
    }
  }

  /**
   * Appends {@code content} (a serialized {@code Request}; from the read barrier's client id, an
   * {@code InternalRequest}) to the log through this node, which must lead. The reply's message is
   * the encoded {@code Response}; a reply that is already complete when this returns was answered
   * before anything was appended.
   */
  CompletableFuture<RaftClientReply> write(ByteString content) {
    return submit(Message.valueOf(content), RaftClientRequest.writeRequestType());
  }

  private CompletableFuture<RaftClientReply> submit(Message message, RaftClientRequest.Type type) {
    RaftClientRequest request =
        RaftClientRequest.newBuilder()
            .setClientId(clientId)
            .setLeaderId(self)
            .setGroupId(groupId)
            .setCallId(callIds.incrementAndGet())
            .setMessage(message)
            .setType(type)
            .build();
    try {
      return server.submitClientRequestAsync(request);
    } catch (IOException | RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }
}
