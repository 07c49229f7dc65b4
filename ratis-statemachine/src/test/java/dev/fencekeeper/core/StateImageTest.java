package dev.fencekeeper.core;

import static dev.fencekeeper.core.Harness.T0;
import static dev.fencekeeper.core.Harness.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * An image pictures the state at the moment it was taken, whatever the state does afterwards, and
 * restoring it gives that state back.
 */
class StateImageTest {

  // Guarantee: restoring an image gives back the state it was taken from, time and queues included.
  @Test
  void restoredImageIsTheState() {
    Harness h = new Harness();
    long token = h.acquire(T0, "r", "A", 10_000).token();
    h.put(T0 + 1, "r", token, "k", "v1");
    h.apply(T0 + 2, new Command.Acquire("r", "B", 10_000, "wait-1", 5_000, 0));
    h.acquire(T0 + 3, "other", "C", 1_000);

    FencingState restored = FencingState.restore(Harness.LIMITS, h.state.image());

    assertThat(StateDump.withNow(restored)).isEqualTo(StateDump.withNow(h.state));
  }

  // Guarantee: writes, deletes and new keys applied after the image was taken do not show in it.
  @Test
  void imageDoesNotSeeLaterChanges() {
    Harness h = new Harness();
    long token = h.acquire(T0, "r", "A", 10_000).token();
    h.put(T0 + 1, "r", token, "k", "v1");
    h.put(T0 + 1, "r", token, "gone", "soon");
    StateImage image = h.state.image();
    String before = StateDump.withNow(FencingState.restore(Harness.LIMITS, image));

    h.put(T0 + 2, "r", token, "k", "v2");
    h.put(T0 + 2, "r", token, "new", "key");
    h.write(T0 + 2, "r", token, "", Command.KeyWrite.delete("gone"));
    h.release(T0 + 3, "r", token);

    StateImage.Resource r = image.resources().get(0);
    assertThat(r.values().keySet()).containsExactly("gone", "k");
    assertThat(r.values().get("k").value()).isEqualTo(bytes("v1"));
    assertThat(r.lease()).isNotNull();
    assertThat(StateDump.withNow(FencingState.restore(Harness.LIMITS, image))).isEqualTo(before);
    assertThat(h.state.resources().get("r").values().keySet()).containsExactly("k", "new");
  }

  // Guarantee: a later image sees the changes made since the earlier one.
  @Test
  void laterImageSeesTheChanges() {
    Harness h = new Harness();
    long token = h.acquire(T0, "r", "A", 10_000).token();
    h.put(T0 + 1, "r", token, "k", "v1");
    h.state.image();

    h.put(T0 + 2, "r", token, "k", "v2");

    assertThat(h.state.image().resources().get(0).values().get("k").value()).isEqualTo(bytes("v2"));
    assertThat(List.copyOf(h.state.resources().get("r").values().keySet())).containsExactly("k");
  }
}
