package dev.fencekeeper.tools.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * CPU time a set of processes has used, from {@code /proc/<pid>/stat} (user + system, all threads).
 * Linux only; elsewhere every reading is unknown and the report says so rather than printing zero.
 */
final class CpuMeter {
  /** The kernel's USER_HZ: 100 on every Linux this runs on (sysconf is not reachable from Java). */
  private static final long TICKS_PER_SECOND = 100;

  private CpuMeter() {}

  /** Total CPU time of {@code pids} in milliseconds, or -1 if any of them cannot be read. */
  static long cpuMillis(List<Long> pids) {
    long total = 0;
    for (long pid : pids) {
      long ms = cpuMillis(pid);
      if (ms < 0) {
        return -1;
      }
      total += ms;
    }
    return total;
  }

  static long cpuMillis(long pid) {
    return ticksMillis(Path.of("/proc", Long.toString(pid), "stat"));
  }

  /**
   * CPU time the JIT compiler threads of {@code pids} have used, in milliseconds, or -1 if
   * unreadable. A compiler thread the JVM retires takes its time with it, so over a window this can
   * only under-count.
   */
  static long jitMillis(List<Long> pids) {
    long total = 0;
    for (long pid : pids) {
      try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
        for (Path task : (Iterable<Path>) tasks::iterator) {
          if (isCompilerThread(task)) {
            long ms = ticksMillis(task.resolve("stat"));
            total += Math.max(0, ms); // a thread that ended between the listing and the read
          }
        }
      } catch (IOException | RuntimeException e) {
        return -1;
      }
    }
    return total;
  }

  /**
   * HotSpot names them "C1 CompilerThread0", "C2 CompilerThread1", ...; the kernel keeps 15
   * characters.
   */
  private static boolean isCompilerThread(Path task) {
    try {
      String name = Files.readString(task.resolve("comm")).trim();
      return name.startsWith("C1 CompilerThre") || name.startsWith("C2 CompilerThre");
    } catch (IOException e) {
      return false;
    }
  }

  private static long ticksMillis(Path statFile) {
    try {
      String stat = Files.readString(statFile);
      // The command name (field 2) may hold spaces and parentheses: count fields after its last
      // ')'.
      String[] fields = stat.substring(stat.lastIndexOf(')') + 2).trim().split("\\s+");
      // After the name, field 3 (state) is index 0, so utime (14) and stime (15) are 11 and 12.
      long ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
      return ticks * 1000 / TICKS_PER_SECOND;
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  static long self() {
    return cpuMillis(ProcessHandle.current().pid());
  }
}
