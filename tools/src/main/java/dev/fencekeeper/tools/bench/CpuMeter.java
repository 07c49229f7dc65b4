package dev.fencekeeper.tools.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * CPU time a set of processes has used, from {@code /proc/<pid>/stat} (user + system, all threads). Linux
 * only; elsewhere every reading is unknown and the report says so rather than printing zero.
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
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
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
