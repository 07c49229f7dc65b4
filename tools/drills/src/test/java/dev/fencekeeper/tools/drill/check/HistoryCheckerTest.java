package dev.fencekeeper.tools.drill.check;

import static dev.fencekeeper.tools.drill.history.LeaseEventRecord.Type.ACQUIRED;
import static dev.fencekeeper.tools.drill.history.LeaseEventRecord.Type.EXPIRED;
import static dev.fencekeeper.tools.drill.history.LeaseEventRecord.Type.RELEASED;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.tools.drill.check.Finding.Kind;
import dev.fencekeeper.tools.drill.history.Op;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The checker flags every kind of violation in a hand-made history, and passes correct ones. */
@Timeout(60)
class HistoryCheckerTest {
  private final HistoryChecker checker = new HistoryChecker();

  /** The README's seed scenario done right: A pauses, B takes over, A's late write is rejected. */
  private static Histories seedScenario() {
    Histories h = new Histories();
    h.acquire("A", "r", 0, 10, 41, 100);
    h.event(ACQUIRED, "r", 41, 100, 12);
    h.write("A", "r", "k", 41, "a1", 20, 30, 1, 200);
    h.event(EXPIRED, "r", 41, 1100, 40);
    h.acquire("B", "r", 50, 60, 42, 1200);
    h.event(ACQUIRED, "r", 42, 1200, 61);
    h.write("B", "r", "k", 42, "b1", 70, 80, 2, 1300);
    return h;
  }

  private static List<Kind> kinds(Verdict verdict) {
    return verdict.findings().stream().map(Finding::kind).toList();
  }

  @Test
  void theSeedScenarioWithItsStaleWriteRejectedPasses() {
    Histories h = seedScenario();
    h.rejectedWrite("A", "r", "k", 41, "a2", 90, 100);
    h.read("C", "r", "k", 110, 120, "b1", 2, 42);
    h.finalRead("r", "k", 200, 210, "b1", 2, 42);

    Verdict verdict = checker.check(h.build());

    assertThat(verdict.findings()).isEmpty();
    assertThat(verdict.passed()).isTrue();
  }

  @Test
  void aStaleWriteAcceptedIsFlaggedWithTheGrantThatMadeItStale() {
    Histories h = seedScenario();
    Op stale = h.write("A", "r", "k", 41, "a2", 90, 100, 3, 1400);
    h.finalRead("r", "k", 200, 210, "a2", 3, 41);

    Verdict verdict = checker.check(h.build());

    assertThat(kinds(verdict))
        .contains(
            Kind.STALE_WRITE_ACCEPTED, Kind.WRITE_AFTER_LEASE_ENDED, Kind.TOKEN_DECREASED_ON_KEY);
    Finding finding =
        verdict.findings().stream()
            .filter(f -> f.kind() == Kind.STALE_WRITE_ACCEPTED)
            .findFirst()
            .orElseThrow();
    assertThat(finding.ops()).extracting(Op::id).contains(stale.id());
    assertThat(finding.ops())
        .anyMatch(o -> o.type() == Op.OpType.ACQUIRE && o.result().token() == 42);
  }

  @Test
  void aStaleWriteIsFlaggedFromClientObservationsAloneWhenEventsAreIncomplete() {
    Histories h = new Histories().eventsIncomplete();
    h.acquire("A", "r", 0, 10, 41, 100);
    h.acquire("B", "r", 50, 60, 42, 1200);
    h.write("A", "r", "k", 41, "a2", 90, 100, 1, 1400);
    h.finalRead("r", "k", 200, 210, "a2", 1, 41);

    Verdict verdict = checker.check(h.build());

    assertThat(kinds(verdict)).containsExactly(Kind.STALE_WRITE_ACCEPTED);
    assertThat(verdict.notes()).anyMatch(n -> n.contains("incomplete"));
  }

  @Test
  void aWriteSentBeforeTheNewerGrantWasKnownIsNotCalledStale() {
    // A's write was in flight when B's grant completed: nothing proves the grant came first.
    Histories h = new Histories().eventsIncomplete();
    h.acquire("A", "r", 0, 10, 41, 100);
    h.write("A", "r", "k", 41, "a1", 40, 100, 1, 1100);
    h.acquire("B", "r", 50, 60, 42, 1200);
    h.finalRead("r", "k", 200, 210, "a1", 1, 41);

    assertThat(checker.check(h.build()).findings()).isEmpty();
  }

  @Test
  void anAcknowledgedWriteMissingFromTheFinalStateIsLost() {
    Histories h = seedScenario();
    h.finalRead("r", "k", 200, 210, "a1", 1, 41);

    Verdict verdict = checker.check(h.build());

    assertThat(kinds(verdict)).contains(Kind.LOST_WRITE);
    Finding lost =
        verdict.findings().stream()
            .filter(f -> f.kind() == Kind.LOST_WRITE)
            .findFirst()
            .orElseThrow();
    assertThat(lost.ops()).extracting(Op::value).contains("b1");
  }

  @Test
  void aWriteReplacedByALaterOneOrByAnUnansweredOneIsNotLost() {
    Histories h = seedScenario();
    h.unknownWrite("B", "r", "k", 42, "b2", 90);
    h.finalRead("r", "k", 200, 210, "b2", 3, 42);

    assertThat(checker.check(h.build()).findings()).isEmpty();
  }

  @Test
  void withoutAFinalReadDurabilityIsInconclusiveNotPassed() {
    Histories h = seedScenario();

    Verdict verdict = checker.check(h.build());

    assertThat(kinds(verdict)).containsExactly(Kind.INCONCLUSIVE);
    assertThat(verdict.passed()).isFalse();
  }

  @Test
  void aKeysAcceptedTokenGoingBackwardsInVersionOrderIsFlagged() {
    Histories h = new Histories().eventsIncomplete();
    h.write("B", "r", "k", 42, "b1", 0, 10, 1, 100);
    h.write("A", "r", "k", 41, "a1", 20, 30, 2, 200);
    h.finalRead("r", "k", 200, 210, "a1", 2, 41);

    Verdict verdict = checker.check(h.build());

    assertThat(kinds(verdict)).containsExactly(Kind.TOKEN_DECREASED_ON_KEY);
    assertThat(verdict.findings().get(0).ops()).extracting(Op::value).containsExactly("b1", "a1");
  }

  @Test
  void aTokenIssuedBelowAnEarlierOneInLogOrderIsFlagged() {
    Histories h = new Histories();
    h.event(ACQUIRED, "r", 50, 100, 10);
    h.event(RELEASED, "r", 50, 200, 20);
    h.event(ACQUIRED, "r", 45, 300, 30);

    assertThat(kinds(checker.check(h.build()))).containsExactly(Kind.TOKEN_NOT_INCREASING);
  }

  @Test
  void tokensGrantedOutOfRealTimeOrderOrTwiceAreFlagged() {
    Histories h = new Histories().eventsIncomplete();
    h.acquire("A", "r", 0, 10, 50, 100);
    h.acquire("B", "r", 20, 30, 45, 300);
    h.acquire("C", "s", 40, 50, 50, 400);

    Verdict verdict = checker.check(h.build());

    assertThat(verdict.findings()).hasSize(2).allMatch(f -> f.kind() == Kind.TOKEN_NOT_INCREASING);
    assertThat(verdict.findings()).anyMatch(f -> f.summary().contains("both granted token 50"));
  }

  @Test
  void aGrantWhileAnotherLeaseIsLiveIsTwoLiveLeases() {
    Histories h = new Histories();
    h.event(ACQUIRED, "r", 41, 100, 10);
    h.event(ACQUIRED, "r", 42, 500, 20);

    Verdict verdict = checker.check(h.build());

    assertThat(kinds(verdict)).containsExactly(Kind.TWO_LIVE_LEASES);
    assertThat(verdict.findings().get(0).events())
        .extracting(e -> e.token())
        .containsExactly(41L, 42L);
  }

  @Test
  void aRenewalAnsweredAfterANewerGrantIsTwoLiveLeases() {
    Histories h = new Histories().eventsIncomplete();
    h.acquire("A", "r", 0, 10, 41, 100);
    h.acquire("B", "r", 20, 30, 42, 500);
    h.renew("A", "r", 41, 40, 50, 600);

    assertThat(kinds(checker.check(h.build()))).containsExactly(Kind.TWO_LIVE_LEASES);
  }

  @Test
  void aReadOfAnOverwrittenValueIsNotLinearizableAndTheWitnessIsMinimal() {
    Histories h = new Histories().eventsIncomplete();
    h.write("A", "r", "k", 41, "a", 0, 10, 1, 100);
    h.read("C", "r", "k", 11, 12, "a", 1, 41);
    h.write("A", "r", "k", 41, "b", 20, 30, 2, 200);
    h.read("C", "r", "k", 31, 32, "b", 2, 41);
    Op staleRead = h.read("D", "r", "k", 40, 50, "a", 1, 41);
    h.finalRead("r", "k", 200, 210, "b", 2, 41);

    Verdict verdict = checker.check(h.build());

    assertThat(kinds(verdict)).containsExactly(Kind.NON_LINEARIZABLE_READ);
    assertThat(verdict.findings().get(0).ops()).extracting(Op::id).contains(staleRead.id());
    assertThat(verdict.findings().get(0).ops()).extracting(Op::value).contains("a", "b");
    assertThat(verdict.findings().get(0).ops()).hasSize(3);
  }

  @Test
  void concurrentReadsMaySeeEitherSideOfAWrite() {
    Histories h = new Histories().eventsIncomplete();
    h.write("A", "r", "k", 41, "a", 0, 10, 1, 100);
    h.write("A", "r", "k", 41, "b", 20, 60, 2, 200);
    h.read("C", "r", "k", 25, 35, "b", 2, 41);
    h.read("D", "r", "k", 30, 40, "b", 2, 41);
    h.read("E", "r", "k", 22, 70, "a", 1, 41);
    h.finalRead("r", "k", 200, 210, "b", 2, 41);

    assertThat(checker.check(h.build()).findings()).isEmpty();
  }

  @Test
  void flipFloppingConcurrentReadsAreNotLinearizable() {
    // Two reads both inside one write: the later must not go back to the old value after the new
    // was seen.
    Histories h = new Histories().eventsIncomplete();
    h.write("A", "r", "k", 41, "a", 0, 10, 1, 100);
    h.write("A", "r", "k", 41, "b", 20, 100, 2, 200);
    h.read("C", "r", "k", 25, 35, "b", 2, 41);
    h.read("D", "r", "k", 40, 50, "a", 1, 41);
    h.finalRead("r", "k", 200, 210, "b", 2, 41);

    assertThat(kinds(checker.check(h.build()))).containsExactly(Kind.NON_LINEARIZABLE_READ);
  }

  @Test
  void anUnansweredWriteMayTakeEffectLateOrNeverButARejectedOneNever() {
    Histories ok = new Histories().eventsIncomplete();
    ok.write("A", "r", "k", 41, "a", 0, 10, 1, 100);
    ok.unknownWrite("A", "r", "k", 41, "u", 5);
    ok.read("C", "r", "k", 100, 110, "a", 1, 41);
    ok.read("C", "r", "k", 120, 130, "u", 2, 41);
    ok.finalRead("r", "k", 200, 210, "u", 2, 41);
    assertThat(checker.check(ok.build()).findings()).isEmpty();

    Histories bad = new Histories().eventsIncomplete();
    bad.write("A", "r", "k", 41, "a", 0, 10, 1, 100);
    bad.rejectedWrite("A", "r", "k", 40, "x", 5, 15);
    bad.read("C", "r", "k", 120, 130, "x", 2, 41);
    bad.finalRead("r", "k", 200, 210, "a", 1, 41);
    assertThat(kinds(checker.check(bad.build()))).contains(Kind.NON_LINEARIZABLE_READ);
  }

  @Test
  void aReadCannotSeeAWriteInvokedAfterItCompleted() {
    Histories h = new Histories().eventsIncomplete();
    h.read("C", "r", "k", 0, 10, "late", 1, 41);
    h.unknownWrite("A", "r", "k", 41, "late", 20);
    h.finalRead("r", "k", 200, 210, "late", 1, 41);

    assertThat(kinds(checker.check(h.build()))).containsExactly(Kind.NON_LINEARIZABLE_READ);
  }

  @Test
  void anExhaustedSearchIsInconclusiveNotAPass() {
    Histories h = new Histories().eventsIncomplete();
    for (int i = 0; i < 8; i++) {
      h.unknownWrite("A" + i, "r", "k", 41, "v" + i, i);
    }
    h.read("C", "r", "k", 100, 110, "nowhere", 1, 41);

    Verdict verdict = new HistoryChecker(5).check(h.build());

    assertThat(kinds(verdict)).containsExactly(Kind.INCONCLUSIVE);
    assertThat(verdict.passed()).isFalse();
  }
}
