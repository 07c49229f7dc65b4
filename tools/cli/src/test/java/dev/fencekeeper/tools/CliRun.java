package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;

/** One in-process run of the command line: its exit code and everything it printed. */
record CliRun(int exitCode, String out, String err) {
  // Strict: trailing text after the object would break `jq` and any script reading it.
  private static final ObjectMapper STRICT =
      new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  /** Runs {@code args} with the given environment and working directory, capturing both streams. */
  static CliRun run(Map<String, String> env, Path workingDir, String... args) {
    return run(env, workingDir, InputStream.nullInputStream(), args);
  }

  /** As {@link #run(Map, Path, String...)}, with {@code stdin} as standard input. */
  static CliRun run(Map<String, String> env, Path workingDir, InputStream stdin, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    CliContext context =
        new CliContext(
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            env,
            workingDir,
            stdin);
    int exit = FencekeeperCli.execute(context, args);
    return new CliRun(
        exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /**
   * Runs {@code args} with no FENCEKEEPER_* variables, so the developer's own environment cannot
   * leak in.
   */
  static CliRun run(Path workingDir, String... args) {
    return run(Map.of(), workingDir, args);
  }

  /** What {@code --json} printed: exactly one JSON object, on one line. */
  static JsonNode json(CliRun run) throws IOException {
    assertThat(run.out().strip()).as(run.toString()).doesNotContain("\n");
    return STRICT.readTree(run.out());
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
