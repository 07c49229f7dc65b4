package dev.fencekeeper.server;

import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Whether a node may start its Raft server, from what its storage holds and what its reachable
 * peers answered ({@link PeerIntroductions}). Pure: the same facts always give the same verdict.
 *
 * <p>A node must not start its Raft server on empty storage in a cluster that has seen it hold the
 * log: a member that lost its log and its vote would grant votes again in terms it already voted in
 * (Ratis grants a vote to any candidate whose log is at least as new as its own, and an empty log
 * is the oldest), so two leaders could be elected in one term. Nor may a node start on storage of
 * another cluster. A node that finds no peer answering starts: that is how a new cluster forms.
 */
public final class StartCheck {
  private StartCheck() {}

  /** What the node at {@code peerId} answered; {@code clusterId} is empty when it knows none. */
  public record Answer(String peerId, String clusterId, boolean knowsAsker) {}

  /** What the starting node's own storage holds. */
  public record Local(
      String nodeId,
      String storageDir,
      Optional<String> clusterId,
      boolean hasRaftData,
      boolean join) {}

  /** The verdict. */
  public sealed interface Verdict {}

  /** Start; {@code adopt}, when present, is the cluster id to store first. */
  public record Start(Optional<String> adopt) implements Verdict {}

  /** Do not start: {@code reason} is the one line saying what happened and the way back. */
  public record Refuse(String reason) implements Verdict {}

  public static Verdict decide(Local local, List<Answer> answers) {
    List<Answer> withId = answers.stream().filter(a -> !a.clusterId().isEmpty()).toList();
    if (local.clusterId().isPresent()) {
      String mine = local.clusterId().get();
      List<Answer> others = withId.stream().filter(a -> !a.clusterId().equals(mine)).toList();
      boolean anySame = withId.stream().anyMatch(a -> a.clusterId().equals(mine));
      if (!others.isEmpty() && !anySame) {
        return new Refuse(
            "node "
                + local.nodeId()
                + " refused to start: its storage "
                + local.storageDir()
                + " belongs to cluster "
                + mine
                + ", but "
                + describe(others)
                + ": it was started with another cluster's storage.dir or peers list. Point"
                + " storage.dir and peers at this node's own cluster, or wipe storage.dir and add"
                + " the node back as a new member (docs/operations.md, \"Replace a node\")");
      }
      if (!local.hasRaftData() && !local.join()) {
        // The id file survived but the Raft log did not (the group directory was deleted or lost):
        // as unsafe as empty storage once a peer has seen this node hold the log.
        Optional<Answer> knows =
            withId.stream().filter(a -> a.clusterId().equals(mine) && a.knowsAsker()).findFirst();
        if (knows.isPresent()) {
          return lostItsLog(
              local, "holds no Raft log (only the id of cluster " + mine + ")", knows.get());
        }
      }
      return new Start(Optional.empty());
    }
    Optional<String> agreed = agreedId(withId);
    if (local.join() || local.hasRaftData()) {
      // A joining node learns the id of the cluster that adds it; so does storage written before
      // this node kept one.
      return new Start(agreed);
    }
    Optional<Answer> knows = withId.stream().filter(Answer::knowsAsker).findFirst();
    if (knows.isPresent()) {
      return lostItsLog(local, "is empty", knows.get());
    }
    // A member of the first configuration that starts after the others formed the cluster: it never
    // held the log, so it joins with the cluster's id.
    return new Start(agreed);
  }

  /**
   * The refusal of a member whose storage {@code state} although peer {@code seenBy} has seen it
   * hold the log, with the way back.
   */
  private static Refuse lostItsLog(Local local, String state, Answer seenBy) {
    return new Refuse(
        "node "
            + local.nodeId()
            + " refused to start: its storage "
            + local.storageDir()
            + " "
            + state
            + ", but peer "
            + seenBy.peerId()
            + " has seen it hold the log of cluster "
            + seenBy.clusterId()
            + ", so it lost its data; a member that lost its log must not vote again. Remove"
            + " it and add it back as a new member: `fencekeeper members remove "
            + local.nodeId()
            + "`, start it with `fencekeeper server --config FILE --join`, then `fencekeeper"
            + " members add "
            + local.nodeId()
            + "=HOST:PORT` (docs/operations.md, \"Replace a node\")");
  }

  /** The one id every answering peer that knows one reports; empty if none or they differ. */
  private static Optional<String> agreedId(List<Answer> withId) {
    List<String> ids = withId.stream().map(Answer::clusterId).distinct().toList();
    return ids.size() == 1 ? Optional.of(ids.get(0)) : Optional.empty();
  }

  private static String describe(List<Answer> others) {
    return others.stream()
        .map(a -> "peer " + a.peerId() + " belongs to cluster " + a.clusterId())
        .collect(Collectors.joining(" and "));
  }
}
