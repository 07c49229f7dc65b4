package dev.fencekeeper.statemachine;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What the node learns from, and tidies in, the files Ratis keeps in its storage directory. */
final class StorageFiles {
  private static final Logger LOG = LoggerFactory.getLogger(StorageFiles.class);

  private StorageFiles() {}

  /**
   * Ratis downloads a snapshot from the leader into {@code tmp/snapshot-<request id>} and moves it
   * into place only when complete; a node killed midway leaves the partial copy behind for good
   * (Ratis reuses a directory only for the same request id). At start no download of this process
   * can be running, so every such directory is abandoned: it is deleted, with a line saying how
   * much it held.
   */
  static void removeAbandonedSnapshotDownloads(Path tmpDir) throws IOException {
    if (!Files.isDirectory(tmpDir)) {
      return;
    }
    List<Path> abandoned;
    try (Stream<Path> entries = Files.list(tmpDir)) {
      abandoned =
          entries
              .filter(
                  p -> Files.isDirectory(p) && p.getFileName().toString().startsWith("snapshot-"))
              .toList();
    }
    for (Path dir : abandoned) {
      long bytes = 0;
      List<Path> paths;
      try (Stream<Path> walk = Files.walk(dir)) {
        paths = walk.sorted(Comparator.reverseOrder()).toList();
      }
      for (Path p : paths) {
        if (Files.isRegularFile(p)) {
          bytes += Files.size(p);
        }
        Files.delete(p);
      }
      LOG.info(
          "Removed {} ({} bytes), a snapshot download that did not complete before this node"
              + " stopped",
          dir,
          bytes);
    }
  }

  /**
   * The bytes the Raft log takes in {@code currentDir}: Ratis's closed segments {@code
   * log_<first>-<last>} and the open {@code log_inprogress_<first>} (preallocated) file.
   */
  static long logSizeBytes(File currentDir) {
    File[] segments = currentDir.listFiles((dir, name) -> name.startsWith("log_"));
    long bytes = 0;
    for (File segment : segments == null ? new File[0] : segments) {
      bytes += segment.length();
    }
    return bytes;
  }
}
