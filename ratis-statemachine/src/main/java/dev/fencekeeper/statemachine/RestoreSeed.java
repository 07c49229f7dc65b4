package dev.fencekeeper.statemachine;

import dev.fencekeeper.config.Limits;
import dev.fencekeeper.config.PrivateFiles;
import dev.fencekeeper.core.FencingState;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.stream.Stream;

/**
 * Seeds a new cluster from a backup. The backup is copied, verified, into each node's storage
 * directory before the node first starts; a node with no snapshot of its own starts from the seed
 * instead of from an empty state, and then applies its log as usual. Every node of the new cluster
 * gets the same seed, so the replicas agree. Loading it starts a new token epoch: no new token can
 * equal or undercut one the old cluster issued, however long it kept running after the backup (no
 * flag to remember, unlike etcd's {@code --bump-revision}). It also ends every lease and drops
 * every waiter of the backup (see {@link FencingState#beginNewEpoch}); the file keeps them, so its
 * format is the snapshot format unchanged.
 */
public final class RestoreSeed {
  static final String FILE_NAME = "fencekeeper-restore.seed";

  private RestoreSeed() {}

  /** The backup's state, for checking a file before seeding and for reporting what it holds. */
  public static FencingState read(Path backup, Limits limits) throws IOException {
    try (InputStream in = new BufferedInputStream(Files.newInputStream(backup), 1 << 16)) {
      return SnapshotStore.readFrom(in, limits);
    }
  }

  /**
   * Verifies {@code backup} and places it in {@code storageDir} for the node that will run there.
   *
   * @throws IOException if the backup is unreadable or the storage directory already holds Raft
   *     data (seeding an existing cluster would make its replicas disagree)
   */
  public static void seed(Path backup, Path storageDir, Limits limits) throws IOException {
    read(backup, limits); // a truncated or foreign file is refused here, not at the node's start
    PrivateFiles.directory(storageDir);
    try (Stream<Path> entries = Files.list(storageDir)) {
      if (entries.anyMatch(p -> Files.isDirectory(p) && isRaftGroupDir(p))) {
        throw new IOException(
            storageDir + " already holds Raft data; restore seeds new, empty nodes only");
      }
    }
    Path tmp = storageDir.resolve(FILE_NAME + ".tmp");
    try (OutputStream out = PrivateFiles.newOutputStream(tmp)) {
      Files.copy(backup, out);
    }
    Files.move(
        tmp,
        storageDir.resolve(FILE_NAME),
        StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
  }

  /**
   * The seeded state for a node whose storage is {@code storageDir}, or null when there is no seed.
   */
  static FencingState load(Path storageDir, Limits limits) throws IOException {
    Path seed = storageDir.resolve(FILE_NAME);
    if (!Files.exists(seed)) {
      return null;
    }
    FencingState state = read(seed, limits);
    state.beginNewEpoch(lineageOf(seed));
    return state;
  }

  /**
   * The lineage of a cluster seeded from {@code seed}: a fingerprint of the file's bytes, so every
   * node seeded from the same backup agrees, and a node seeded from another backup (or none) does
   * not.
   */
  static long lineageOf(Path seed) throws IOException {
    MessageDigest sha;
    try {
      sha = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-256", e);
    }
    try (InputStream in =
        new DigestInputStream(new BufferedInputStream(Files.newInputStream(seed), 1 << 16), sha)) {
      in.transferTo(OutputStream.nullOutputStream());
    }
    long fingerprint = ByteBuffer.wrap(sha.digest()).getLong();
    return fingerprint == 0 ? 1 : fingerprint; // 0 is the lineage of a cluster that began empty
  }

  private static boolean isRaftGroupDir(Path dir) {
    return Files.isDirectory(dir.resolve("current"));
  }
}
