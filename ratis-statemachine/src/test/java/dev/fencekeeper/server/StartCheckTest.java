package dev.fencekeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.server.StartCheck.Answer;
import dev.fencekeeper.server.StartCheck.Local;
import dev.fencekeeper.server.StartCheck.Refuse;
import dev.fencekeeper.server.StartCheck.Start;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The start verdict for each combination of what a node's storage holds and its peers answer. */
class StartCheckTest {
  private static final String X = "00000000000000aa";
  private static final String Y = "00000000000000bb";

  private static Local empty(boolean join) {
    return new Local("n3", "/data/n3", Optional.empty(), false, join);
  }

  private static Local holding(String id) {
    return new Local("n3", "/data/n3", Optional.of(id), true, false);
  }

  @Test
  void newClusterFormsWhenNoPeerKnowsAnId() {
    assertThat(StartCheck.decide(empty(false), List.of())).isEqualTo(new Start(Optional.empty()));
    assertThat(StartCheck.decide(empty(false), List.of(new Answer("n1", "", false))))
        .isEqualTo(new Start(Optional.empty()));
  }

  @Test
  void emptyStorageSeenByAPeerIsRefusedWithTheWayBack() {
    var verdict =
        StartCheck.decide(
            empty(false), List.of(new Answer("n1", X, false), new Answer("n2", X, true)));
    assertThat(verdict).isInstanceOf(Refuse.class);
    assertThat(((Refuse) verdict).reason())
        .contains("node n3 refused to start", "/data/n3 is empty", "peer n2", X)
        .contains("`fencekeeper members remove n3`", "--join", "members add n3=")
        .doesNotContain("backup");
  }

  @Test
  void emptyStorageNoPeerHasSeenTakesTheClustersId() {
    assertThat(StartCheck.decide(empty(false), List.of(new Answer("n1", X, false))))
        .isEqualTo(new Start(Optional.of(X)));
  }

  @Test
  void joinTakesTheClustersIdEvenWhenSeenBefore() {
    assertThat(StartCheck.decide(empty(true), List.of(new Answer("n1", X, true))))
        .isEqualTo(new Start(Optional.of(X)));
  }

  // Guarantee: a node whose storage kept the cluster id file but lost its Raft log is refused
  // like a wiped member once a peer has seen it hold the log; with --join, or when no peer has
  // seen it (it stored the id before its first start got further), it starts.
  @Test
  void idWithoutRaftLogSeenByAPeerIsRefusedWithTheWayBack() {
    Local idOnly = new Local("n3", "/data/n3", Optional.of(X), false, false);
    var verdict =
        StartCheck.decide(idOnly, List.of(new Answer("n1", X, false), new Answer("n2", X, true)));
    assertThat(verdict).isInstanceOf(Refuse.class);
    assertThat(((Refuse) verdict).reason())
        .contains("node n3 refused to start", "/data/n3 holds no Raft log", "peer n2", X)
        .contains("`fencekeeper members remove n3`", "--join", "members add n3=");
    Local joining = new Local("n3", "/data/n3", Optional.of(X), false, true);
    assertThat(StartCheck.decide(joining, List.of(new Answer("n2", X, true))))
        .isEqualTo(new Start(Optional.empty()));
    assertThat(StartCheck.decide(idOnly, List.of(new Answer("n2", X, false))))
        .isEqualTo(new Start(Optional.empty()));
    assertThat(StartCheck.decide(holding(X), List.of(new Answer("n2", X, true))))
        .isEqualTo(new Start(Optional.empty()));
  }

  @Test
  void storageOfAnotherClusterIsRefusedUnlessAPeerSharesIt() {
    var verdict = StartCheck.decide(holding(Y), List.of(new Answer("n1", X, false)));
    assertThat(verdict).isInstanceOf(Refuse.class);
    assertThat(((Refuse) verdict).reason())
        .contains("belongs to cluster " + Y, "peer n1 belongs to cluster " + X);
    // One peer that agrees: the odd one out may be the peer (it is refused when it restarts).
    assertThat(
            StartCheck.decide(
                holding(Y), List.of(new Answer("n1", X, false), new Answer("n2", Y, true))))
        .isEqualTo(new Start(Optional.empty()));
    assertThat(StartCheck.decide(holding(Y), List.of())).isEqualTo(new Start(Optional.empty()));
  }

  @Test
  void raftDataWithoutAnIdTakesTheAgreedIdOnly() {
    Local old = new Local("n3", "/data/n3", Optional.empty(), true, false);
    assertThat(StartCheck.decide(old, List.of(new Answer("n1", X, true))))
        .isEqualTo(new Start(Optional.of(X)));
    assertThat(
            StartCheck.decide(old, List.of(new Answer("n1", X, true), new Answer("n2", Y, true))))
        .isEqualTo(new Start(Optional.empty()));
  }
}
