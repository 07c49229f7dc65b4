package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.fencekeeper.core.StateImage;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.ratis.server.protocol.TermIndex;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The index Ratis gets back from {@code takeSnapshot} is always on disk, yet a snapshot Ratis
 * triggers itself is written while apply goes on.
 */
class SnapshotTakerTest {
  private static final Duration BOUND = Duration.ofSeconds(30);
  private static final long AUTO_TRIGGER = 100;

  private final List<Long> onDisk = new CopyOnWriteArrayList<>();
  private final List<String> writerThreads = new CopyOnWriteArrayList<>();
  private final CountDownLatch release = new CountDownLatch(1);
  private final AtomicBoolean blockWrites = new AtomicBoolean();
  private final AtomicBoolean failWrites = new AtomicBoolean();
  private final SnapshotTaker taker = new SnapshotTaker(this::write);

  private void write(StateImage image, TermIndex applied) throws IOException {
    writerThreads.add(Thread.currentThread().getName());
    if (blockWrites.get()) {
      try {
        release.await(BOUND.toSeconds(), TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (failWrites.get()) {
      throw new IOException("no space left on device");
    }
    onDisk.add(applied.getIndex());
  }

  private long take(long index) throws IOException {
    TermIndex applied = TermIndex.valueOf(1, index);
    return taker.take(
        applied, () -> new SnapshotTaker.Image(applied, new StateImage(1, 0, 0, 0, List.of())));
  }

  @AfterEach
  void close() {
    release.countDown();
    taker.close();
  }

  // Guarantee: a snapshot asked for below the auto-trigger threshold (an operator's request, the
  // one at stop) is on disk when the call returns, and the call returns its index.
  @Test
  void requestedSnapshotIsOnDiskWhenTheCallReturns() throws IOException {
    taker.autoTriggerEntries(AUTO_TRIGGER);
    taker.onDisk(10);

    assertThat(take(50)).isEqualTo(50);
    assertThat(onDisk).containsExactly(50L);
    assertThat(take(50)).as("nothing new: nothing written").isEqualTo(50);
    assertThat(onDisk).containsExactly(50L);
  }

  // Guarantee: a snapshot Ratis triggers itself does not hold up the caller (the apply thread)
  // for the write, and until it is on disk the caller gets the index that is.
  @Test
  void triggeredSnapshotIsWrittenInTheBackground() throws IOException {
    taker.autoTriggerEntries(AUTO_TRIGGER);
    taker.onDisk(10);
    blockWrites.set(true);

    long first = assertTimeoutPreemptively(BOUND, () -> take(110));
    long again = assertTimeoutPreemptively(BOUND, () -> take(130));

    assertThat(first).as("the durable index, not the one being written").isEqualTo(10);
    assertThat(again).isEqualTo(10);
    assertThat(onDisk).isEmpty();
    release.countDown();
    await().atMost(BOUND).until(() -> onDisk.contains(110L));
    assertThat(take(140)).as("the written one, once on disk").isEqualTo(110);
    assertThat(onDisk).as("one write for all those calls").containsExactly(110L);
    assertThat(writerThreads).allMatch(name -> name.equals("fencekeeper-snapshot-writer"));
  }

  // Guarantee: a requested snapshot waits for a triggered one under way, then writes its own.
  @Test
  void requestedSnapshotWaitsForTheOneUnderWay() throws IOException {
    taker.autoTriggerEntries(AUTO_TRIGGER);
    taker.onDisk(10);
    blockWrites.set(true);
    assertThat(take(110)).isEqualTo(10);
    taker.onDisk(100); // installed from the leader meanwhile: 150 is now a requested snapshot
    blockWrites.set(false);
    release.countDown();

    long index = assertTimeoutPreemptively(BOUND, () -> take(150));

    assertThat(index).isEqualTo(150);
    assertThat(onDisk).containsExactly(110L, 150L);
  }

  // Guarantee: a failed background write never advances the index Ratis gets; the next call
  // writes a fresh image.
  @Test
  void failedBackgroundWriteIsTakenAnew() throws IOException {
    taker.autoTriggerEntries(AUTO_TRIGGER);
    taker.onDisk(10);
    failWrites.set(true);
    assertThat(take(110)).isEqualTo(10);
    taker.awaitWrite();

    failWrites.set(false);
    assertThat(take(120)).isEqualTo(10);
    taker.awaitWrite();

    assertThat(onDisk).containsExactly(120L);
    assertThat(take(120)).isEqualTo(120);
  }

  // Guarantee: a requested snapshot that cannot be written reports it to Ratis.
  @Test
  void failedRequestedWriteIsReported() {
    failWrites.set(true);

    assertThatThrownBy(() -> take(5)).isInstanceOf(IOException.class);
    assertThat(onDisk).isEmpty();
  }
}
