package dev.fencekeeper.server;

import dev.fencekeeper.config.PrivateFiles;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Which cluster a node's storage belongs to, and which peers it has seen hold that cluster's log:
 * the file {@value #FILE_NAME} in {@code storage.dir}, written atomically and synced. The id is
 * minted when the cluster first forms ({@link #mint}); every member keeps it, and peers compare it
 * before a node starts its Raft server ({@link StartCheck}).
 */
public final class ClusterIdentity {
  public static final String FILE_NAME = "fencekeeper-cluster.id";
  private static final String ID_KEY = "cluster.id";
  private static final String SEEN_KEY = "members.seen";

  private final Path file;
  private String clusterId;
  private final Set<String> seen = new TreeSet<>();

  private ClusterIdentity(Path file) {
    this.file = file;
  }

  /** The identity stored in {@code storageDir}; empty (no id, nobody seen) when there is none. */
  public static ClusterIdentity open(Path storageDir) throws IOException {
    ClusterIdentity identity = new ClusterIdentity(storageDir.resolve(FILE_NAME));
    if (Files.exists(identity.file)) {
      Properties p = new Properties();
      try (InputStream in = Files.newInputStream(identity.file)) {
        p.load(new StringReader(new String(in.readAllBytes(), StandardCharsets.UTF_8)));
      }
      String id = p.getProperty(ID_KEY, "").trim();
      if (!isWellFormed(id)) {
        throw new IOException(
            identity.file + ": " + ID_KEY + " '" + id + "' is not a cluster id (16 hex digits)");
      }
      identity.clusterId = id;
      String seen = p.getProperty(SEEN_KEY, "").trim();
      if (!seen.isEmpty()) {
        identity.seen.addAll(Arrays.asList(seen.split(",")));
      }
    }
    return identity;
  }

  /**
   * The id of a cluster whose first state-machine entry (the first entry of its log that is not a
   * configuration) has {@code term}, {@code index} and leader stamp {@code stampMs}: every replica
   * that applied that entry derives the same id, and a cluster formed again under the same name
   * (another time) gets another.
   */
  public static String mint(String groupId, long term, long index, long stampMs) {
    MessageDigest sha;
    try {
      sha = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-256", e);
    }
    byte[] digest =
        sha.digest(
            (groupId + "|" + term + "|" + index + "|" + stampMs).getBytes(StandardCharsets.UTF_8));
    return HexFormat.of().formatHex(digest, 0, 8);
  }

  static boolean isWellFormed(String id) {
    return id.length() == 16 && id.chars().allMatch(c -> Character.digit(c, 16) >= 0);
  }

  /** This storage's cluster id; empty while it knows none. */
  public synchronized Optional<String> clusterId() {
    return Optional.ofNullable(clusterId);
  }

  /** Whether {@code nodeId} was seen holding this cluster's log. */
  public synchronized boolean hasSeen(String nodeId) {
    return seen.contains(nodeId);
  }

  /** Stores {@code id} as this storage's cluster id; an id already stored is never replaced. */
  synchronized boolean adopt(String id) throws IOException {
    if (!isWellFormed(id)) {
      throw new IllegalArgumentException("not a cluster id: '" + id + "'");
    }
    if (clusterId != null) {
      return false;
    }
    clusterId = id;
    save();
    return true;
  }

  /** Records that {@code nodeId} holds this cluster's log; stored only when it is news. */
  synchronized void see(String nodeId) throws IOException {
    if (clusterId != null && seen.add(nodeId)) {
      save();
    }
  }

  private void save() throws IOException {
    String text =
        "# Which cluster this storage belongs to (minted when it first formed), and the members\n"
            + "# this node has seen hold its log. Written by fencekeeper; see docs/operations.md.\n"
            + ID_KEY
            + "="
            + clusterId
            + "\n"
            + SEEN_KEY
            + "="
            + seen.stream().collect(Collectors.joining(","))
            + "\n";
    PrivateFiles.directory(file.getParent());
    Path tmp = file.resolveSibling(FILE_NAME + ".tmp");
    try (FileChannel c = PrivateFiles.create(tmp)) {
      ByteBuffer bytes = ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
      while (bytes.hasRemaining()) {
        c.write(bytes);
      }
      c.force(true);
    }
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    try (FileChannel dir = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
      dir.force(true);
    } catch (IOException ignored) {
      // Not every file system lets a directory be synced; the rename is then as durable as it gets.
    }
  }
}
