package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real {@code ./fencekeeper up}, started as a user would, whose stdout is followed line by line.
 * Close it to make sure neither it nor any node it started outlives the test.
 */
final class UpProcess implements AutoCloseable {
  private static final Pattern NODE_LINE = Pattern.compile("^(n\\d+)\\s+(\\S+)\\s+pid (\\d+)\\b.*");

  private final Process process;
  private final Path stderrFile;
  private final List<String> lines = new ArrayList<>();
  private final Thread reader;

  private UpProcess(Process process, Path stderrFile) {
    this.process = process;
    this.stderrFile = stderrFile;
    this.reader = new Thread(this::follow, "up-stdout");
    reader.setDaemon(true);
    reader.start();
  }

  /**
   * Runs {@code ./fencekeeper up} in {@code repoRoot} with {@code env} added to this JVM's
   * environment.
   */
  static UpProcess start(Path repoRoot, Map<String, String> env, Path stderrFile)
      throws IOException {
    ProcessBuilder builder =
        new ProcessBuilder("./fencekeeper", "up")
            .directory(repoRoot.toFile())
            .redirectError(ProcessBuilder.Redirect.appendTo(stderrFile.toFile()))
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    builder.environment().putAll(env);
    return new UpProcess(builder.start(), stderrFile);
  }

  private void follow() {
    try (BufferedReader out =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = out.readLine()) != null; ) {
        synchronized (this) {
          lines.add(line);
          notifyAll();
        }
      }
    } catch (IOException e) {
      // The process ended or was killed; the lines read so far stay available.
    }
  }

  /** Waits for a stdout line matching {@code pattern} (a full match) and returns its match. */
  synchronized Matcher awaitLine(Pattern pattern, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    for (int seen = 0; ; ) {
      for (; seen < lines.size(); seen++) {
        Matcher m = pattern.matcher(lines.get(seen));
        if (m.matches()) {
          return m;
        }
      }
      long left = deadline - System.nanoTime();
      if (left <= 0 || (!process.isAlive() && seen == lines.size())) {
        throw new AssertionError(
            "`up` printed no line matching " + pattern + " within " + timeout + "\n" + describe());
      }
      TimeUnit.NANOSECONDS.timedWait(this, Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)));
    }
  }

  /** The pid of each node, as `up` printed it. */
  synchronized Map<String, Long> nodePids() {
    Map<String, Long> pids = new LinkedHashMap<>();
    for (String line : lines) {
      Matcher m = NODE_LINE.matcher(line);
      if (m.matches()) {
        pids.put(m.group(1), Long.parseLong(m.group(3)));
      }
    }
    assertThat(pids).as(describe()).hasSize(3);
    return pids;
  }

  Process process() {
    return process;
  }

  /** Waits for `up` to exit and for its last lines to be read; false if it is still running. */
  boolean awaitExit(Duration timeout) throws InterruptedException {
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      return false;
    }
    reader.join(TimeUnit.SECONDS.toMillis(10));
    return true;
  }

  /** Everything `up` printed so far, for failure messages. */
  synchronized String describe() {
    String stderr;
    try {
      stderr = Files.exists(stderrFile) ? Files.readString(stderrFile) : "";
    } catch (IOException e) {
      stderr = "(unreadable: " + e + ")";
    }
    return "--- up stdout\n" + String.join("\n", lines) + "\n--- up stderr\n" + stderr;
  }

  /** Kills `up` and every node it printed, if still running. Safe to call more than once. */
  @Override
  public void close() {
    List<Long> nodePids;
    synchronized (this) {
      nodePids =
          lines.stream()
              .map(NODE_LINE::matcher)
              .filter(Matcher::matches)
              .map(m -> Long.parseLong(m.group(3)))
              .toList();
    }
    process.destroyForcibly();
    for (long pid : nodePids) {
      ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
    }
    try {
      process.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
