package dev.fencekeeper.tools;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;

/** One in-process run of the command line: its exit code and everything it printed. */
record CliRun(int exitCode, String out, String err) {

  /** Runs {@code args} with the given environment and working directory, capturing both streams. */
  static CliRun run(Map<String, String> env, Path workingDir, String... args) {
    return run(env, workingDir, InputStream.nullInputStream(), args);
  }

  /** As {@link #run(Map, Path, String...)}, with {@code stdin} as standard input. */
  static CliRun run(Map<String, String> env, Path workingDir, InputStream stdin, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    CliContext context = new CliContext(
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8),
        env,
        workingDir,
        stdin);
    int exit = FencekeeperCli.execute(context, args);
    return new CliRun(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** Runs {@code args} with no FENCEKEEPER_* variables, so the developer's own environment cannot leak in. */
  static CliRun run(Path workingDir, String... args) {
    return run(Map.of(), workingDir, args);
  }

  /** The single line printed on stdout, without its newline. */
  String line() {
    return out.strip();
  }

  @Override
  public String toString() {
    return "exit " + exitCode + "\n--- stdout\n" + out + "--- stderr\n" + err;
  }
}
