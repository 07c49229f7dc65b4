package dev.fencekeeper.core;

import static dev.fencekeeper.core.Code.ACCEPTED;
import static dev.fencekeeper.core.Code.GRANTED;
import static dev.fencekeeper.core.Code.HELD;
import static dev.fencekeeper.core.Code.INVALID_ARGUMENT;
import static dev.fencekeeper.core.Code.RELEASED;
import static dev.fencekeeper.core.Code.RENEWED;
import static dev.fencekeeper.core.Code.STALE_TOKEN;
import static dev.fencekeeper.core.Code.UNKNOWN_TOKEN;
import static dev.fencekeeper.core.Harness.T0;
import static dev.fencekeeper.core.Harness.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.core.Command.KeyWrite;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Several client commands in one log entry: {@link FencingState#applyBatch}. */
class BatchTest {
  private final Harness h = new Harness();
  private long index = 100;

  private List<Outcome> batch(long at, Command... commands) {
    return h.state.applyBatch(new Command.Batch(List.of(commands)), ++index, at);
  }

  private static Command.Write put(
      String resource, long token, String key, String value, String requestId) {
    return new Command.Write(resource, token, List.of(KeyWrite.put(key, bytes(value))), requestId);
  }

  private static List<Code> codes(List<Outcome> outcomes) {
    return outcomes.stream().map(Outcome::code).toList();
  }

  @Test
  void eachCommandIsAnsweredAsIfItWereAlone() {
    long old = h.acquire(T0, "report", "A", 1_000).token();
    h.release(T0 + 1, "report", old);

    List<Outcome> out =
        batch(
            T0 + 2,
            new Command.Acquire("report", "B", 5_000),
            new Command.Acquire("report", "C", 5_000),
            put("report", old, "k", "from A", ""),
            put("report", 999_999, "k", "never issued", ""));

    assertThat(codes(out)).containsExactly(GRANTED, HELD, STALE_TOKEN, UNKNOWN_TOKEN);
    long b = out.get(0).token();
    assertThat(b).isGreaterThan(old);
    assertThat(out.get(1).token())
        .as("HELD names the holder granted just before in the same batch")
        .isEqualTo(b);
    assertThat(out.get(2).currentToken()).isEqualTo(b);

    List<Outcome> next =
        batch(
            T0 + 3,
            put("report", b, "k", "from B", ""),
            new Command.Renew("report", b, 0),
            new Command.Release("report", b));
    assertThat(codes(next)).containsExactly(ACCEPTED, RENEWED, RELEASED);
    assertThat(h.state.read("report", "k").acceptedToken()).isEqualTo(b);
  }

  @Test
  void grantsInOneBatchGetStrictlyIncreasingTokensAboveEveryEarlierOne() {
    long before = h.acquire(T0, "r0", "A", 5_000).token();

    List<Outcome> out =
        batch(
            T0 + 1,
            new Command.Acquire("r1", "A", 5_000),
            new Command.Acquire("r2", "A", 5_000),
            new Command.Acquire("r3", "A", 5_000));

    List<Long> tokens = out.stream().map(Outcome::token).toList();
    assertThat(tokens).isSorted().doesNotHaveDuplicates().allMatch(t -> t > before);
    assertThat(h.state.lastIssuedToken()).isEqualTo(tokens.get(2));
    long after = h.acquire(T0 + 2, "r4", "A", 5_000).token();
    assertThat(after).isGreaterThan(tokens.get(2));
  }

  @Test
  void aMalformedCommandIsRejectedAloneAndTheOthersApply() {
    List<Outcome> out =
        batch(
            T0,
            new Command.Acquire("a", "A", 5_000),
            new Command.Acquire("b", "A", 1), // below lease.ttl.min
            new Command.Acquire("c", "A", 5_000));

    assertThat(codes(out)).containsExactly(GRANTED, INVALID_ARGUMENT, GRANTED);
    assertThat(out.get(1).message()).contains("ttl");
    assertThat(h.state.resources()).containsOnlyKeys("a", "c");
  }

  @Test
  void aRetriedWriteInTheSameBatchIsAppliedOnce() {
    long token = h.acquire(T0, "r", "A", 5_000).token();

    List<Outcome> out =
        batch(T0 + 1, put("r", token, "k", "v1", "req-1"), put("r", token, "k", "v1", "req-1"));

    assertThat(codes(out)).containsExactly(ACCEPTED, ACCEPTED);
    assertThat(out.get(1).version())
        .as("the retry answers the first outcome")
        .isEqualTo(out.get(0).version());
    assertThat(h.state.read("r", "k").version()).isEqualTo(1);
  }

  @Test
  void theWrapperSeesEveryCommandOnceInOrder() {
    List<Command> seen = new ArrayList<>();
    List<Command> commands =
        List.of(new Command.Acquire("a", "A", 5_000), new Command.Acquire("b", "A", 5_000));

    h.state.applyBatch(
        new Command.Batch(commands),
        0,
        ++index,
        T0,
        (command, run) -> {
          seen.add(command);
          return run.get();
        });

    assertThat(seen).isEqualTo(commands);
  }

  @Test
  void aBatchThatIsMalformedAsAWholeChangesNothingAndRejectsEveryCommand() {
    long token = h.acquire(T0, "r", "A", 60_000).token();
    String before = h.dump();
    int limit = h.state.limits().maxRequestsPerBatch();

    List<Command> tooMany =
        new ArrayList<>(Collections.nCopies(limit + 1, new Command.Acquire("x", "A", 5_000)));
    List<Outcome> overLimit = h.state.applyBatch(new Command.Batch(tooMany), ++index, T0 + 1);
    assertThat(codes(overLimit)).hasSize(limit + 1).containsOnly(INVALID_ARGUMENT);
    assertThat(overLimit.get(0).message()).contains("exceed the limit of " + limit);

    List<Outcome> withRevoke =
        batch(T0 + 2, new Command.Acquire("x", "A", 5_000), new Command.Revoke("r", "ops"));
    assertThat(codes(withRevoke)).containsExactly(INVALID_ARGUMENT, INVALID_ARGUMENT);
    assertThat(withRevoke.get(0).message()).contains("request 2", "may be batched");

    // A batch is one log entry: its values together are bounded like one write's (1 KiB in the
    // harness).
    String half = "x".repeat(600);
    List<Outcome> tooBig =
        batch(T0 + 3, put("r", token, "k1", half, ""), put("r", token, "k2", half, ""));
    assertThat(codes(tooBig)).containsOnly(INVALID_ARGUMENT);
    assertThat(tooBig.get(0).message()).contains("1200 value bytes");

    assertThat(batch(T0 + 4)).isEmpty();
    assertThat(h.dump()).isEqualTo(before);
  }

  @Test
  void applyRefusesABatchPassedAsOneCommand() {
    String before = h.dump();

    Outcome o = h.apply(T0, new Command.Batch(List.of(new Command.Acquire("a", "A", 5_000))));

    assertThat(o.code()).isEqualTo(INVALID_ARGUMENT);
    assertThat(h.dump()).isEqualTo(before);
  }
}
