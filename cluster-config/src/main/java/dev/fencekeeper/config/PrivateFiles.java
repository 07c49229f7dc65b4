package dev.fencekeeper.config;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * Files only their own user may read: what fencekeeper keeps (a node's storage directory,
 * snapshots, log directory and restore seed, a client's backup) holds every protected value, so
 * directories are made {@code rwx------} and files {@code rw-------} when they are created, not
 * afterwards. Where the file system has no POSIX permissions its own defaults apply.
 */
public final class PrivateFiles {
  public static final Set<PosixFilePermission> DIRECTORY =
      PosixFilePermissions.fromString("rwx------");
  public static final Set<PosixFilePermission> FILE = PosixFilePermissions.fromString("rw-------");

  private PrivateFiles() {}

  /**
   * Creates {@code dir} and any missing parent as private directories, or, if {@code dir} exists
   * with wider permissions, narrows them.
   *
   * @return whether an existing directory's permissions were narrowed
   */
  public static boolean directory(Path dir) throws IOException {
    Path absolute = dir.toAbsolutePath();
    if (!posix()) {
      Files.createDirectories(absolute);
      return false;
    }
    if (Files.isDirectory(absolute)) {
      if (Files.getPosixFilePermissions(absolute).equals(DIRECTORY)) {
        return false;
      }
      Files.setPosixFilePermissions(absolute, DIRECTORY);
      return true;
    }
    Path parent = absolute.getParent();
    if (parent != null && !Files.isDirectory(parent)) {
      directory(parent);
    }
    Files.createDirectory(absolute, PosixFilePermissions.asFileAttribute(DIRECTORY));
    // The creation mode passes through the process's umask, which can only narrow it.
    Files.setPosixFilePermissions(absolute, DIRECTORY);
    return false;
  }

  /** Opens {@code file} for writing from its start, created (or truncated) private. */
  public static FileChannel create(Path file) throws IOException {
    FileChannel channel =
        posix()
            ? FileChannel.open(
                file,
                Set.of(
                    StandardOpenOption.CREATE,
                    StandardOpenOption.TRUNCATE_EXISTING,
                    StandardOpenOption.WRITE),
                privateFile())
            : FileChannel.open(
                file,
                StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE);
    try {
      restrict(file); // an existing file keeps its mode when truncated
    } catch (IOException e) {
      channel.close();
      throw e;
    }
    return channel;
  }

  /** {@link #create} as a stream. */
  public static OutputStream newOutputStream(Path file) throws IOException {
    return Channels.newOutputStream(create(file));
  }

  /** Makes an existing file private. */
  public static void restrict(Path file) throws IOException {
    if (posix()) {
      Files.setPosixFilePermissions(file, FILE);
    }
  }

  private static FileAttribute<Set<PosixFilePermission>> privateFile() {
    return PosixFilePermissions.asFileAttribute(FILE);
  }

  private static boolean posix() {
    return FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
  }
}
