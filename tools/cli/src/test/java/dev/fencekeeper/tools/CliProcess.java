package dev.fencekeeper.tools;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The command line in a JVM of its own, started from this test's class path as {@code
 * ./fencekeeper} would start the jar: for what only a real process shows (signals, child processes,
 * what lands on stderr). Output goes to files in {@code dir}; {@link #close} kills it and
 * everything it started.
 */
final class CliProcess implements AutoCloseable {
  private final Process process;
  private final Path stdout;
  private final Path stderr;

  private CliProcess(Process process, Path stdout, Path stderr) {
    this.process = process;
    this.stdout = stdout;
    this.stderr = stderr;
  }

  /**
   * Starts {@code fencekeeper args...} in {@code dir}, its output in {@code dir/<name>.out} and
   * {@code .err}.
   */
  static CliProcess start(Path dir, String name, String... args) throws IOException {
    // SIGHUP as a supervisor leaves it, whatever this test's JVM inherited (a build run under
    // nohup ignores it, and an ignored SIGHUP stays ignored in every child).
    return start(List.of("env", "--default-signal=HUP"), dir, name, args);
  }

  /** As {@link #start}, the process started with SIGHUP ignored, as {@code nohup} starts it. */
  static CliProcess startWithHangupIgnored(Path dir, String name, String... args)
      throws IOException {
    return start(List.of("env", "--ignore-signal=HUP"), dir, name, args);
  }

  private static CliProcess start(List<String> prefix, Path dir, String name, String... args)
      throws IOException {
    List<String> command = new ArrayList<>(prefix);
    command.addAll(
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m",
            "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC",
            // The logging the jar ships with, not this module's logback-test.xml (which
            // silences Ratis and gRPC):
            // what lands on stderr is part of what these tests check.
            "-Dlogback.configurationFile=logback.xml",
            "-cp",
            System.getProperty("java.class.path"),
            FencekeeperCli.class.getName()));
    command.addAll(List.of(args));
    Path out = dir.resolve(name + ".out");
    Path err = dir.resolve(name + ".err");
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(dir.toFile())
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    // As in CliRun: no FENCEKEEPER_* variable of the developer's reaches the command.
    builder.environment().keySet().removeIf(key -> key.startsWith("FENCEKEEPER_"));
    return new CliProcess(builder.start(), out, err);
  }

  /** Waits for the process to exit and returns its code; fails the test if it is still running. */
  int awaitExit(Duration timeout) throws InterruptedException {
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new AssertionError("still running after " + timeout + "\n" + describe());
    }
    return process.exitValue();
  }

  /**
   * Waits until the process has written {@code text} to stderr; fails the test with both outputs
   * when the process exits first or {@code timeout} passes.
   */
  void awaitErr(String text, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!err().contains(text)) {
      if (!process.isAlive()) {
        throw new AssertionError(
            "exited (" + process.exitValue() + ") before writing \"" + text + "\"\n" + describe());
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("no \"" + text + "\" after " + timeout + "\n" + describe());
      }
      Thread.sleep(50);
    }
  }

  /** Sends SIGTERM, as a supervisor stopping it would. */
  void terminate() {
    process.destroy();
  }

  boolean isAlive() {
    return process.isAlive();
  }

  long pid() {
    return process.pid();
  }

  String out() {
    return read(stdout);
  }

  String err() {
    return read(stderr);
  }

  String describe() {
    return "--- stdout\n" + out() + "--- stderr\n" + err();
  }

  private static String read(Path file) {
    try {
      return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    } catch (IOException e) {
      return "(unreadable: " + e + ")";
    }
  }

  @Override
  public void close() {
    process.descendants().forEach(ProcessHandle::destroyForcibly);
    process.destroyForcibly();
    try {
      process.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
