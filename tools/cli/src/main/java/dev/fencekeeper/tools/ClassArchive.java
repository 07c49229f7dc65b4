package dev.fencekeeper.tools;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

/**
 * The class archive the {@code fencekeeper} launcher makes after each build ({@link
 * ClassArchiveTraining}) and starts every JVM with. JVMs the tools start themselves (nodes, a
 * bench's holder) use the same one, so a node started by {@code up}, {@code bench} or {@code drill}
 * starts as fast as one started by hand.
 */
public final class ClassArchive {
  private static final String ARCHIVE_FLAG = "-XX:SharedArchiveFile=";
  // A jar rebuilt since the archive was made makes the JVM print a warning and load classes from
  // the jar as before; the warning would land in a script's stdout, so it is silenced.
  private static final List<String> QUIET = List.of("-Xlog:cds=off", "-Xlog:cds+dynamic=off");

  private ClassArchive() {}

  /** The JVM flags that give a child JVM this JVM's class archive; none when this JVM has none. */
  public static List<String> childJvmFlags() {
    for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (arg.startsWith(ARCHIVE_FLAG)) {
        List<String> flags = new ArrayList<>(QUIET);
        flags.add(0, arg);
        return flags;
      }
    }
    return List.of();
  }
}
