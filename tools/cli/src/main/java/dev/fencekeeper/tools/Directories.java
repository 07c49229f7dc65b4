package dev.fencekeeper.tools;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** The temp dirs the tools make for their own clusters (bench, drills, class-archive training). */
public final class Directories {
  private Directories() {}

  /**
   * Deletes {@code root} and everything under it, as far as it can: what is left is only a temp
   * dir, so a failure here must not hide the result of the work that used it.
   */
  public static void deleteTree(Path root) {
    try (Stream<Path> paths = Files.walk(root)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // Only a temp dir left behind.
    }
  }
}
