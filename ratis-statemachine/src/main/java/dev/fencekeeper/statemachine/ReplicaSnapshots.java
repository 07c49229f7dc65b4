package dev.fencekeeper.statemachine;

import dev.fencekeeper.config.Limits;
import dev.fencekeeper.core.FencingState;
import java.io.IOException;
import java.nio.file.Path;
import java.util.function.Supplier;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This replica's snapshots, for the adapter's Ratis callbacks: the storage directory Ratis sees,
 * the state to start from (the newest snapshot, else a restore seed, else empty), the state to
 * continue from after the leader installed a snapshot, and snapshots taken for Ratis ({@link
 * SnapshotTaker}) and written by {@link SnapshotStore}. The state itself stays with the adapter,
 * under its lock: what is loaded is handed to an {@link Adopter}.
 */
final class ReplicaSnapshots implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ReplicaSnapshots.class);

  /** Takes over a loaded state as the replica's state. */
  @FunctionalInterface
  interface Adopter {
    /**
     * Replaces the replica's state with {@code state}. {@code applied} is the entry a snapshot
     * reflects, or null for a restore seed: then nothing counts as applied, and the log from its
     * first entry is applied on top of the seed.
     */
    void adopt(FencingState state, TermIndex applied);
  }

  private final Limits limits;
  private final Adopter adopter;
  private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
  private final SnapshotStore store;
  private final LatestSnapshot latest = new LatestSnapshot(storage);
  private final SnapshotTaker taker;

  ReplicaSnapshots(Limits limits, Adopter adopter) {
    this.limits = limits;
    this.adopter = adopter;
    this.store = new SnapshotStore(storage, limits);
    this.taker =
        new SnapshotTaker(
            (image, applied) -> {
              store.write(image, applied);
              latest.changed();
            });
  }

  /** Hands {@code loaded} over to the adopter. */
  private void adopt(FencingState loaded, TermIndex applied) {
    adopter.adopt(loaded, applied);
  }

  /** The storage Ratis's {@code getStateMachineStorage} returns. */
  StateMachineStorage storage() {
    return storage;
  }

  /**
   * At start: takes the storage directory over from Ratis and adopts the newest snapshot in it, or,
   * when there is none, the restore seed of a cluster restored from a backup, if any.
   */
  void start(RaftStorage raftStorage, RaftProperties properties) throws IOException {
    storage.init(raftStorage);
    if (RaftServerConfigKeys.Snapshot.autoTriggerEnabled(properties)) {
      taker.autoTriggerEntries(RaftServerConfigKeys.Snapshot.autoTriggerThreshold(properties));
    }
    StorageFiles.removeAbandonedSnapshotDownloads(raftStorage.getStorageDir().getTmpDir().toPath());
    if (!loadLatest()) {
      startFromRestoreSeed(raftStorage.getStorageDir().getRoot().toPath().getParent());
    }
  }

  /**
   * After the leader installed a snapshot: adopts it. Run under the adapter's write lock, after
   * {@link #awaitWrite}: a write of this node's must not finish after the installed snapshot is
   * loaded.
   */
  void reloadInstalled() throws IOException {
    storage.loadLatestSnapshot(); // storage.getLatestSnapshot() is cached; rescan for the new one
    latest.changed();
    loadLatest();
  }

  /** Waits for a snapshot write under way, if any. */
  void awaitWrite() {
    taker.awaitWrite();
  }

  /** Returns false when there is no snapshot to load. */
  private boolean loadLatest() throws IOException {
    SnapshotStore.Loaded loaded = store.loadLatest();
    if (loaded == null) {
      return false;
    }
    adopt(loaded.state(), loaded.termIndex());
    taker.onDisk(loaded.termIndex().getIndex());
    LOG.info(
        "Loaded snapshot {} ({} resources)", loaded.termIndex(), loaded.state().resources().size());
    return true;
  }

  private void startFromRestoreSeed(Path storageDir) throws IOException {
    FencingState seeded = RestoreSeed.load(storageDir, limits);
    if (seeded == null) {
      return;
    }
    adopt(seeded, null);
    LOG.info(
        "Started from the restore seed in {} ({} resources; tokens continue above {})",
        storageDir,
        seeded.resources().size(),
        seeded.lastIssuedToken());
  }

  /** The newest snapshot on disk, or null (see {@link LatestSnapshot}). */
  SnapshotInfo latest() {
    return latest.get();
  }

  /** The index of the newest snapshot on disk, or {@link RaftLog#INVALID_LOG_INDEX}. */
  long latestIndex() {
    SnapshotInfo snapshot = latest();
    return snapshot == null ? RaftLog.INVALID_LOG_INDEX : snapshot.getIndex();
  }

  /**
   * Ratis's {@code takeSnapshot}: the index of the newest snapshot on disk when this returns (see
   * {@link SnapshotTaker#take}).
   *
   * @param applied the last applied entry as Ratis asks, or null before any
   * @param image takes the state's image and the entry it reflects together, under the state's lock
   */
  long take(TermIndex applied, Supplier<SnapshotTaker.Image> image) throws IOException {
    if (applied == null || applied.getIndex() < 0) {
      return RaftLog.INVALID_LOG_INDEX;
    }
    return taker.take(applied, image);
  }

  /** Waits for a write under way, then stops the writer thread. */
  @Override
  public void close() {
    taker.close();
  }
}
