package dev.fencekeeper.core;

import static dev.fencekeeper.core.Harness.T0;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A lease belongs to the identity that acquired it (docs/security.md): another identity holding the
 * right token may not renew, release or write with it, nor take over its request id; and the count
 * limits refuse cleanly. Every refusal leaves the state exactly as it was.
 */
class IdentityAndLimitsTest {
  private static final String ALICE = "alice";
  private static final String MALLORY = "mallory";

  @Test
  void anotherIdentityCannotRenewReleaseOrWriteWithTheToken() {
    Harness h = new Harness();
    Outcome granted = h.apply(T0, new Command.Acquire("r", "a", 10_000, "req-1", 0, 0, ALICE));
    long token = granted.token();
    String before = StateDump.of(h.state);

    Outcome renew = h.apply(T0 + 1, new Command.Renew("r", token, 10_000, MALLORY));
    Outcome release = h.apply(T0 + 2, new Command.Release("r", token, MALLORY));
    Outcome write =
        h.apply(
            T0 + 3,
            new Command.Write(
                "r",
                token,
                List.of(Command.KeyWrite.put("k", "v".getBytes(StandardCharsets.UTF_8))),
                "",
                MALLORY));
    Outcome retry = h.apply(T0 + 4, new Command.Acquire("r", "m", 10_000, "req-1", 0, 0, MALLORY));

    for (Outcome o : List.of(renew, release, write, retry)) {
      assertThat(o.code()).isEqualTo(Code.PERMISSION_DENIED);
    }
    assertThat(renew.message()).contains(ALICE).contains(MALLORY);
    assertThat(StateDump.of(h.state)).isEqualTo(before);

    assertThat(h.apply(T0 + 5, new Command.Renew("r", token, 10_000, ALICE)).code())
        .isEqualTo(Code.RENEWED);
    assertThat(h.apply(T0 + 6, new Command.Release("r", token, ALICE)).code())
        .isEqualTo(Code.RELEASED);
  }

  @Test
  void aQueuedIdentityKeepsItsPlaceAndGetsTheLeaseAsItself() {
    Harness h = new Harness();
    long first = h.apply(T0, new Command.Acquire("r", "a", 1_000, "a-1", 0, 0, ALICE)).token();
    assertThat(h.apply(T0 + 1, new Command.Acquire("r", "b", 1_000, "b-1", 5_000, 0, "bob")).code())
        .isEqualTo(Code.WAITING);
    // Neither re-sending nor cancelling bob's wait works from another identity.
    assertThat(
            h.apply(T0 + 2, new Command.Acquire("r", "m", 1_000, "b-1", 5_000, 0, MALLORY)).code())
        .isEqualTo(Code.PERMISSION_DENIED);
    assertThat(h.apply(T0 + 3, new Command.CancelWait("r", "b-1", MALLORY)).code())
        .isEqualTo(Code.PERMISSION_DENIED);

    h.apply(T0 + 4, new Command.Release("r", first, ALICE));
    LeaseRecord lease = h.state.resources().get("r").lease();
    assertThat(lease.identity()).isEqualTo("bob");
    assertThat(h.apply(T0 + 5, new Command.Renew("r", lease.token(), 1_000, MALLORY)).code())
        .isEqualTo(Code.PERMISSION_DENIED);
    assertThat(h.apply(T0 + 6, new Command.Renew("r", lease.token(), 1_000, "bob")).code())
        .isEqualTo(Code.RENEWED);
  }

  @Test
  void withoutAnIdentityTheTokenAloneIsEnough() {
    Harness h = new Harness();
    long token = h.apply(T0, new Command.Acquire("r", "a", 10_000)).token();
    assertThat(h.apply(T0 + 1, new Command.Renew("r", token, 10_000, "anyone")).code())
        .isEqualTo(Code.RENEWED);
  }

  @Test
  void theResourceCountIsBoundedAndARefusalChangesNothing() {
    Harness h = new Harness(Harness.LIMITS.withMaxResources(2));
    h.acquire(T0, "r1", "a", 10_000);
    h.acquire(T0, "r2", "a", 10_000);
    String before = StateDump.of(h.state);
    Outcome third = h.acquire(T0 + 1, "r3", "a", 10_000);
    assertThat(third.code()).isEqualTo(Code.OVERLOADED);
    assertThat(third.message()).contains("limits.resources.max");
    assertThat(StateDump.of(h.state)).isEqualTo(before);
    assertThat(h.acquire(T0 + 2, "r1", "b", 10_000).code())
        .isEqualTo(Code.HELD); // existing ones still work
  }

  @Test
  void theKeysOfAResourceAreBoundedAndDeletesMakeRoom() {
    Harness h = new Harness(Harness.LIMITS.withMaxKeysPerResource(2));
    long token = h.acquire(T0, "r", "a", 10_000).token();
    assertThat(h.put(T0, "r", token, "k1", "v").code()).isEqualTo(Code.ACCEPTED);
    assertThat(h.put(T0, "r", token, "k2", "v").code()).isEqualTo(Code.ACCEPTED);
    String before = StateDump.of(h.state);
    Outcome third = h.put(T0 + 1, "r", token, "k3", "v");
    assertThat(third.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(third.message()).contains("limits.keys-per-resource.max");
    assertThat(StateDump.of(h.state)).isEqualTo(before);
    assertThat(h.put(T0 + 2, "r", token, "k1", "overwrite").code()).isEqualTo(Code.ACCEPTED);
    assertThat(
            h.apply(
                    T0 + 3,
                    new Command.Write(
                        "r",
                        token,
                        List.of(
                            Command.KeyWrite.delete("k1"),
                            Command.KeyWrite.put("k3", new byte[] {1})),
                        ""))
                .code())
        .isEqualTo(Code.ACCEPTED);
  }
}
