package dev.fencekeeper.clientport;

import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.metrics.FollowerLag;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.statemachine.WireCodec;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * What the admin calls refuse before they ask Raft for anything, judged from the configuration the
 * node sees: each method returns the answer that refuses the request (nothing changed), or null
 * when it may go ahead. No Raft, no clock: {@link AdminCalls} asks, this decides.
 */
public final class AdminRules {
  private AdminRules() {}

  /** A new member {@code id} at the Raft address {@code address}, or why it cannot be added. */
  static Response whyNotAdd(List<PeerAddress> current, String id, String address) {
    PeerAddress peer;
    try {
      peer = PeerAddress.parse(id + "@" + address);
    } catch (ConfigException e) {
      return WireCodec.invalid(
          "member: '"
              + id
              + "' at '"
              + address
              + "' is not an id and a host:port: "
              + e.getMessage());
    }
    for (PeerAddress m : current) {
      if (m.id().equals(peer.id())) {
        return WireCodec.invalid(
            "member " + peer.id() + " is already in the configuration (" + peersOf(current) + ")");
      }
      if (m.address().equalsIgnoreCase(peer.address())) {
        return WireCodec.invalid(peer.address() + " is already the address of member " + m.id());
      }
    }
    return null;
  }

  /**
   * Why {@code clientAddress} cannot be the client address of member {@code id} at Raft address
   * {@code address}: not a host:port, or the Raft address itself; null when it can (empty: none
   * given, the default rule applies).
   */
  static Response whyNotClientAddress(String id, String address, String clientAddress) {
    if (clientAddress.isEmpty()) {
      return null;
    }
    PeerAddress client;
    try {
      client = PeerAddress.parse(id + "@" + clientAddress);
    } catch (ConfigException e) {
      return WireCodec.invalid(
          "client address of "
              + id
              + ": '"
              + clientAddress
              + "' is not a host:port: "
              + e.getMessage());
    }
    if (client.address().equalsIgnoreCase(address)) {
      return WireCodec.invalid(
          "client address of "
              + id
              + ": '"
              + clientAddress
              + "' is its Raft address; give the port it serves clients on");
    }
    return null;
  }

  /**
   * Why member {@code id} cannot be removed by leader {@code leaderId}: no such member, the last
   * one, or the leader itself. A Ratis 3.3.0 leader that commits a configuration without itself can
   * leave the change unanswered and the remaining members without a leader, so leadership moves
   * first.
   */
  static Response whyNotRemove(List<PeerAddress> current, String id, String leaderId) {
    if (current.stream().noneMatch(m -> m.id().equals(id))) {
      return noSuchMember(current, id);
    }
    if (current.size() == 1) {
      return WireCodec.invalid("cannot remove the last member");
    }
    if (id.equals(leaderId)) {
      return WireCodec.invalid(
          "member "
              + id
              + " leads: move leadership to another member first (TransferLeadership), then remove"
              + " it");
    }
    return null;
  }

  /**
   * Why leadership cannot move to {@code to} (null: a step-down, always allowed): no such member,
   * or a follower that lags in the leader's {@code view}.
   */
  static Response whyNotTransfer(
      List<PeerAddress> current, String to, List<FollowerLag> view, Duration maxLag) {
    if (to == null) {
      return null;
    }
    if (current.stream().noneMatch(m -> m.id().equals(to))) {
      return noSuchMember(current, to);
    }
    String lagging = laggingRefusal(to, view, maxLag);
    return lagging == null
        ? null
        : Response.newBuilder().setCode(ResultCode.UNAVAILABLE).setMessage(lagging).build();
  }

  /**
   * Why a leadership transfer to {@code target} must be refused because it lags in {@code view}, or
   * null. Ratis would accept it and then wait, up to the caller's timeout, for the follower to
   * catch up, refusing every write meanwhile because the leader is stepping down; a follower that
   * stopped advancing may never catch up.
   */
  public static String laggingRefusal(String target, List<FollowerLag> view, Duration maxLag) {
    for (FollowerLag f : view) {
      if (f.peer().equals(target) && f.lagging()) {
        return "refusing to transfer leadership to "
            + target
            + ": it lags, "
            + f.lagEntries()
            + " entries behind the leader (match index "
            + f.matchIndex()
            + ") without advancing for "
            + String.format(Locale.ROOT, "%.1f", f.lagSeconds())
            + "s (health.max-follower-lag "
            + maxLag.toMillis()
            + " ms); leadership stays where it is. Transfer once it has caught up ('status' shows"
            + " its lag), or to another member";
      }
    }
    return null;
  }

  static Response noSuchMember(List<PeerAddress> current, String id) {
    return Response.newBuilder()
        .setCode(ResultCode.NOT_FOUND)
        .setMessage("no member " + id + " in the configuration (" + peersOf(current) + ")")
        .build();
  }

  /** The members as a {@code peers=} value. */
  static String peersOf(List<PeerAddress> members) {
    return String.join(",", members.stream().map(PeerAddress::toString).toList());
  }
}
