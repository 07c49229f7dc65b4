package dev.fencekeeper.tools;

import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Map;

/**
 * Everything a command reads from or writes to its surroundings, handed in rather than taken from
 * {@link System}, so tests can run any command in-process and inspect exactly what it printed.
 *
 * @param out results: the one line or JSON object a script reads
 * @param err diagnostics: usage errors, progress, warnings
 * @param env environment variables that provide defaults ({@code FENCEKEEPER_PEERS}, ...)
 * @param workingDir what relative paths the user typed resolve against
 * @param in standard input, for {@code write --value-file -}
 */
public record CliContext(
    PrintStream out, PrintStream err, Map<String, String> env, Path workingDir, InputStream in) {

  /** A context whose standard input is empty. */
  public CliContext(PrintStream out, PrintStream err, Map<String, String> env, Path workingDir) {
    this(out, err, env, workingDir, InputStream.nullInputStream());
  }

  public static CliContext system() {
    return new CliContext(
        System.out, System.err, System.getenv(), Path.of("").toAbsolutePath(), System.in);
  }

  /** The environment variable {@code name}, or {@code fallback} if it is unset or blank. */
  public String env(String name, String fallback) {
    String value = env.get(name);
    return value == null || value.isBlank() ? fallback : value.trim();
  }

  public Path resolve(Path path) {
    return workingDir.resolve(path).normalize();
  }
}
