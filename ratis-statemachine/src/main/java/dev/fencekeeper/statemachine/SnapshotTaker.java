package dev.fencekeeper.statemachine;

import dev.fencekeeper.core.StateImage;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes snapshots for Ratis's {@code takeSnapshot} without stalling apply for the file write.
 *
 * <p>Ratis calls {@code takeSnapshot} on the thread that applies the log, and may purge the log up
 * to the index it returns, so that index must be durable when the call returns. A snapshot Ratis
 * triggers itself (every {@code snapshot.auto-trigger.entries} entries) is therefore written in the
 * background: the call takes an immutable {@link StateImage} (cheap), hands it to a writer thread
 * and returns the newest index already on disk; a later call, once the write is done, returns the
 * new index, and Ratis purges up to it then. Ratis keeps calling while it still counts the
 * threshold as reached, and those calls return at once. Any other call — an operator's snapshot
 * request, the snapshot at stop — expects the current index back, so it waits for a write under way
 * and writes one itself before returning. Either way the image is taken under the state's lock and
 * written outside it, so queries are never held up by the write.
 */
final class SnapshotTaker implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SnapshotTaker.class);

  /** Writes one snapshot durably: when it returns, the snapshot of {@code applied} is on disk. */
  @FunctionalInterface
  interface Writer {
    void write(StateImage image, TermIndex applied) throws IOException;
  }

  /** The state as of the entry {@code applied}, taken under one lock. */
  record Image(TermIndex applied, StateImage state) {}

  private final Writer writer;
  private final ExecutorService writerThread =
      Executors.newSingleThreadExecutor(
          task -> {
            Thread t = new Thread(task, "fencekeeper-snapshot-writer");
            t.setDaemon(true);
            return t;
          });
  private long autoTriggerEntries = Long.MAX_VALUE;
  private long durableIndex = RaftLog.INVALID_LOG_INDEX;
  private CompletableFuture<Long> inFlight;

  SnapshotTaker(Writer writer) {
    this.writer = writer;
  }

  /**
   * How many applied entries past the newest snapshot make Ratis take one itself ({@code
   * raft.server.snapshot.auto.trigger.threshold}); Long.MAX_VALUE when it never does.
   */
  synchronized void autoTriggerEntries(long entries) {
    autoTriggerEntries = entries;
  }

  /** A snapshot at {@code index} is on disk already: loaded at start or installed by the leader. */
  synchronized void onDisk(long index) {
    durableIndex = Math.max(durableIndex, index);
  }

  /**
   * Ratis's {@code takeSnapshot}: the index of the newest snapshot on disk when this returns.
   *
   * @param applied the last applied entry as this call begins, to decide what to do
   * @param image takes the image, and the entry it reflects, together under the state's lock
   */
  synchronized long take(TermIndex applied, Supplier<Image> image) throws IOException {
    // Ratis triggers a snapshot itself exactly when this many entries passed the index it was
    // last given, which is durableIndex: then an older index is an answer it accepts.
    boolean inBackground = applied.getIndex() - durableIndex >= autoTriggerEntries;
    if (inFlight != null) {
      if (inBackground && !inFlight.isDone()) {
        return durableIndex;
      }
      long before = durableIndex;
      collect();
      if (inBackground && durableIndex > before) {
        return durableIndex; // Ratis purges up to it now, and asks again if another is due
      }
    }
    if (applied.getIndex() <= durableIndex) {
      return durableIndex;
    }
    Image taken = image.get();
    if (inBackground) {
      inFlight = CompletableFuture.supplyAsync(() -> write(taken), writerThread);
      return durableIndex;
    }
    writer.write(taken.state(), taken.applied());
    durableIndex = Math.max(durableIndex, taken.applied().getIndex());
    return durableIndex;
  }

  /** Waits for the write under way, if any: a snapshot installed meanwhile must not race it. */
  synchronized void awaitWrite() {
    if (inFlight != null) {
      collect();
    }
  }

  private long write(Image image) {
    try {
      writer.write(image.state(), image.applied());
      return image.applied().getIndex();
    } catch (IOException | RuntimeException e) {
      LOG.error(
          "Failed to write the snapshot of {}; the next one is taken anew", image.applied(), e);
      throw new CompletionException(e);
    }
  }

  /** Waits for the write under way and records its index; a failed write was logged already. */
  private void collect() {
    CompletableFuture<Long> done = inFlight;
    inFlight = null;
    try {
      durableIndex = Math.max(durableIndex, done.join());
    } catch (CompletionException e) {
      // The state is intact and the next call writes a fresh image.
    }
  }

  /** Waits for the write under way, then stops the writer thread. */
  @Override
  public synchronized void close() {
    if (inFlight != null) {
      collect();
    }
    writerThread.shutdown();
  }
}
