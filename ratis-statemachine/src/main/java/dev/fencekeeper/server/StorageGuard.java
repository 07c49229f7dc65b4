package dev.fencekeeper.server;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a node from filling its storage. Ratis writes its vote and term ({@code raft-meta}) through
 * a temp file that is renamed over the old one when the stream closes — also after a write to it
 * failed for want of space, which leaves {@code raft-meta} empty and the node unable to start
 * ("'term' not found"). Ratis's own {@code raft.server.storage.free-space.min} is checked only when
 * storage is opened at start, never before an append or a metadata write. So this guard watches the
 * free space of the storage directory and, before it falls under {@link #RESERVE_BYTES}, stops the
 * node while there is still room for every file it must write to stop and to start again; a node
 * does not start below the reserve either. A supervisor restarts it; the start succeeds once space
 * has been freed.
 *
 * <p>How often it looks follows how close the disk is to the reserve: it assumes the disk fills at
 * no more than {@link #FILL_BYTES_PER_SECOND} and looks again before that rate could have used the
 * headroom above the reserve, at least every {@value #MIN_INTERVAL_MS} ms and at most every {@value
 * #MAX_INTERVAL_MS} ms. At that rate the reserve is never entered between two looks, which is more
 * than a fixed look every {@value #MIN_INTERVAL_MS} ms gave (the reserve itself was what a look's
 * interval could use up); near the reserve it looks as often as that, and with gigabytes free it
 * costs one look a second instead of twenty.
 */
final class StorageGuard implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(StorageGuard.class);

  /**
   * Free space below which a node stops appending. Well above what the node writes between two
   * checks (a 4 MB log-segment preallocation, an 8 MB write-buffer flush) and what stopping needs.
   */
  static final long RESERVE_BYTES = 64L << 20;

  /** TEST ONLY: a smaller reserve, for drills on a small tmpfs. Never set in production. */
  static final String RESERVE_PROPERTY = "fencekeeper.testing.storage-reserve-bytes";

  /** The shortest interval between two looks, where the headroom is nearly gone. */
  static final long MIN_INTERVAL_MS = 50;

  /** The longest interval between two looks, however much is free. */
  static final long MAX_INTERVAL_MS = 1_000;

  /**
   * The fastest the storage is assumed to fill: the reserve every {@value #MIN_INTERVAL_MS} ms, the
   * rate a fixed look at that interval was sized for; far beyond what a node writes (its log at
   * saturation is tens of MB/s).
   */
  static final long FILL_BYTES_PER_SECOND = RESERVE_BYTES * 1_000 / MIN_INTERVAL_MS;

  private final Path dir;
  private final FileStore store;
  private final long reserveBytes;
  private final ScheduledExecutorService checker;
  private final CompletableFuture<String> exhausted = new CompletableFuture<>();
  private volatile long freeBytes;

  private StorageGuard(Path dir, FileStore store, long reserveBytes, String nodeId) {
    this.dir = dir;
    // Found once: Files.getFileStore reads the mount table on every call, statvfs is all a look
    // needs.
    this.store = store;
    this.reserveBytes = reserveBytes;
    this.checker =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "fencekeeper-storage-guard-" + nodeId);
              t.setDaemon(true);
              return t;
            });
  }

  static long reserveBytes() {
    return Long.getLong(RESERVE_PROPERTY, RESERVE_BYTES);
  }

  /**
   * Checks that {@code dir} has room for the node to run, and starts watching it.
   *
   * @throws StorageFullException when the free space is already below the reserve
   */
  static StorageGuard start(Path dir, String nodeId) throws IOException {
    Files.createDirectories(dir);
    StorageGuard guard = new StorageGuard(dir, Files.getFileStore(dir), reserveBytes(), nodeId);
    guard.freeBytes = guard.measure();
    if (guard.freeBytes < guard.reserveBytes) {
      guard.checker.shutdownNow();
      throw new StorageFullException(guard.why());
    }
    guard.scheduleNext();
    return guard;
  }

  /**
   * Completes, once, with the reason when the free space fell below the reserve: the node must
   * stop.
   */
  CompletableFuture<String> exhausted() {
    return exhausted;
  }

  /** The free space last measured, in bytes. */
  long freeBytes() {
    return freeBytes;
  }

  /** Null while the node can persist; otherwise why it cannot. */
  String problem() {
    return exhausted.getNow(null);
  }

  private void check() {
    try {
      freeBytes = measure();
    } catch (IOException e) {
      LOG.debug("cannot measure the free space of {}: {}", dir, e.toString());
      scheduleNext(MIN_INTERVAL_MS);
      return;
    }
    if (freeBytes < reserveBytes && exhausted.complete(why())) {
      LOG.error("Stopping this node: {}", why()); // once: the future completes only once
      checker.shutdown();
      return;
    }
    scheduleNext();
  }

  /**
   * Milliseconds until the next look, with {@code headroomBytes} free above the reserve: the time
   * the storage takes to fill that much at {@link #FILL_BYTES_PER_SECOND}, within the bounds.
   */
  static long intervalMs(long headroomBytes) {
    long fillMs = Math.max(0, headroomBytes) / (FILL_BYTES_PER_SECOND / 1_000);
    return Math.max(MIN_INTERVAL_MS, Math.min(MAX_INTERVAL_MS, fillMs));
  }

  private void scheduleNext() {
    scheduleNext(intervalMs(freeBytes - reserveBytes));
  }

  private void scheduleNext(long delayMs) {
    try {
      checker.schedule(this::check, delayMs, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException closed) {
      // The guard was closed.
    }
  }

  private String why() {
    return "storage "
        + dir
        + " has "
        + freeBytes
        + " bytes free, below the reserve of "
        + reserveBytes
        + " bytes this node keeps so that its Raft metadata and log are never left torn; free space"
        + " and start it again (it refuses to start until then)";
  }

  private long measure() throws IOException {
    return store.getUsableSpace();
  }

  @Override
  public void close() {
    checker.shutdownNow();
  }
}
