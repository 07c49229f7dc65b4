package dev.fencekeeper.clientport;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupManagementRequest;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.protocol.SnapshotManagementRequest;
import org.apache.ratis.protocol.TransferLeadershipRequest;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * This node's own Raft server, reached in-process: the one way into Raft on a node. Commands from
 * the client port, the leader's own entries (takeover, expiry ticks, read barriers) and admin calls
 * are handed to it as Ratis's gRPC service would hand them over ({@link
 * RaftServer#submitClientRequestAsync} and the admin calls), without a client, a channel or a
 * second serialization; Ratis's client and admin services on the Raft port refuse every call
 * ({@link RaftPortGuide}).
 *
 * <p>Client commands carry {@link #clientId()}, the node's own entries {@link #internalId()}, so
 * the state machine knows which is which; each call has a call id that only grows, so Ratis's retry
 * cache (keyed by both) never mistakes one for another; retries of a client's command are new
 * calls, and their exactly-once rests on the request ids the state machine records.
 */
public final class LocalRaft {
  private final RaftServer server;
  private final RaftGroupId groupId;
  private final RaftPeerId self;
  private final ClientId clientId = ClientId.randomId();
  private final ClientId internalId = ClientId.randomId();
  private final AtomicLong callIds = new AtomicLong();

  /** Node {@code self}'s way into its own {@code server}, built before the server starts. */
  public LocalRaft(RaftServer server, RaftGroupId groupId, RaftPeerId self) {
    this.server = server;
    this.groupId = groupId;
    this.self = self;
  }

  /** The client id of the client port's commands. */
  public ClientId clientId() {
    return clientId;
  }

  /** The client id of this node's own entries ({@code InternalRequest}s). */
  public ClientId internalId() {
    return internalId;
  }

  /**
   * Appends {@code internal} (a serialized {@code InternalRequest}: a takeover, a tick) to the log
   * through this node, which must lead; completes when it is applied, or fails.
   */
  public CompletableFuture<RaftClientReply> propose(ByteString internal) {
    return submit(internalId, Message.valueOf(internal), RaftClientRequest.writeRequestType());
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
   * Appends {@code content} (a serialized {@code Request} from the client port) to the log through
   * this node, which must lead. The reply's message is the encoded {@code Response}; a reply that
   * is already complete when this returns was answered before anything was appended.
   */
  CompletableFuture<RaftClientReply> write(ByteString content) {
    return submit(clientId, Message.valueOf(content), RaftClientRequest.writeRequestType());
  }

  /** This node's Raft division; fails while the node runs no group (a node started to join). */
  RaftServer.Division division() throws IOException {
    return server.getDivision(groupId);
  }

  /**
   * Asks this node, as leader, to change the configuration to {@code peers} (the List form: Ratis
   * 3.3.0's array overload never sets the servers).
   */
  CompletableFuture<RaftClientReply> setConfiguration(List<RaftPeer> peers) {
    return admin(
        () ->
            server.setConfigurationAsync(
                new SetConfigurationRequest(
                    clientId, self, groupId, callIds.incrementAndGet(), peers)));
  }

  /**
   * Asks this node, as leader, to hand leadership to {@code to} (null: to step down), waiting up to
   * {@code timeoutMs} for it to take over.
   */
  CompletableFuture<RaftClientReply> transferLeadership(String to, long timeoutMs) {
    return admin(
        () ->
            server.transferLeadershipAsync(
                new TransferLeadershipRequest(
                    clientId,
                    self,
                    groupId,
                    callIds.incrementAndGet(),
                    to == null ? null : RaftPeerId.valueOf(to),
                    timeoutMs)));
  }

  /** Takes a snapshot on this node now (creation gap 1: whenever anything was applied since). */
  CompletableFuture<RaftClientReply> snapshot(long timeoutMs) {
    return admin(
        () ->
            server.snapshotManagementAsync(
                SnapshotManagementRequest.newCreate(
                    clientId, self, groupId, callIds.incrementAndGet(), timeoutMs, 1)));
  }

  /** Creates the group on this node, with {@code peers} as its configuration. */
  CompletableFuture<RaftClientReply> joinGroup(List<RaftPeer> peers) {
    return admin(
        () ->
            server.groupManagementAsync(
                GroupManagementRequest.newAdd(
                    clientId, self, callIds.incrementAndGet(), RaftGroup.valueOf(groupId, peers))));
  }

  private interface AdminCall {
    CompletableFuture<RaftClientReply> send() throws IOException;
  }

  private static CompletableFuture<RaftClientReply> admin(AdminCall call) {
    try {
      return call.send();
    } catch (IOException | RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private CompletableFuture<RaftClientReply> submit(
      ClientId from, Message message, RaftClientRequest.Type type) {
    RaftClientRequest request =
        RaftClientRequest.newBuilder()
            .setClientId(from)
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
