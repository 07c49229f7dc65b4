package dev.fencekeeper.tools;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.KeyChange;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.config.ConfigException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code write}: one fenced write (or delete) of one key. */
@Command(
    name = "write",
    mixinStandardHelpOptions = true,
    header = "Write (or delete) a protected value, fenced by a token.",
    description = {
      "Writes <value> (or the bytes of --value-file) to <key> of <resource>, or deletes <key> with"
          + " --delete. Accepted only while --token is the resource's live lease and no newer token"
          + " has written the key.",
      "Arguments are taken literally: a <value> starting with @ is that text, not a file.",
      "Exit 0 ACCEPTED, 6 STALE_TOKEN, 7 LEASE_EXPIRED, 8 UNKNOWN_TOKEN, 9 INVALID_ARGUMENT."
    })
final class WriteCommand extends ClientVerb implements CallDeadline.Changes {
  static final String STDIN = "-";

  @Parameters(index = "0", paramLabel = "<resource>")
  private String resource;

  @Parameters(index = "1", paramLabel = "<key>")
  private String key;

  @Parameters(
      index = "2",
      arity = "0..1",
      paramLabel = "<value>",
      description = "The new value (UTF-8).")
  private String value;

  @Option(
      names = "--value-file",
      paramLabel = "FILE",
      description =
          "Write the bytes of FILE as they are (`-`: standard input) instead of <value>: for values"
              + " too large for a command line, or not text.")
  private Path valueFile;

  @Option(names = "--delete", description = "Remove <key> instead of writing a value.")
  private boolean delete;

  @Option(
      names = "--token",
      required = true,
      paramLabel = "N",
      converter = TokenConverter.class,
      description = "The fencing token of your lease.")
  private long token;

  @Option(
      names = "--request-id",
      paramLabel = "ID",
      description =
          "Makes a retry safe: a write repeated with the same id under the same lease is applied"
              + " once. Default: a new id, kept while this command resends a write whose answer"
              + " was lost.")
  private String requestId;

  WriteCommand(CliContext context) {
    super(context);
  }

  @Override
  void checkOptions() {
    int given = (delete ? 1 : 0) + (value != null ? 1 : 0) + (valueFile != null ? 1 : 0);
    if (given > 1) {
      throw usageError("give one of <value>, --value-file or --delete");
    }
    if (given == 0) {
      throw usageError("missing <value> (or --value-file, or --delete)");
    }
  }

  @Override
  ResultView call(FencingClient fencing) {
    KeyChange change =
        delete
            ? KeyChange.delete(key)
            : valueFile != null
                ? KeyChange.put(key, readValueFile())
                : KeyChange.put(key, value.getBytes(StandardCharsets.UTF_8));
    // An id of its own when none is given, so that a write whose answer was lost is sent again as
    // the same write and reports what the cluster did with it.
    String id = requestId != null ? requestId : UUID.randomUUID().toString();
    return ResultView.ofValue(
        UntilAnswered.send(
            retryBudget(),
            () ->
                fencing.writeAsync(resource, token, List.of(change), id).thenApply(Wire::response),
            fencing::clusterUnreachable),
        resource,
        key);
  }

  private byte[] readValueFile() {
    try {
      if (valueFile.toString().equals(STDIN)) {
        return context.in().readAllBytes();
      }
      return Files.readAllBytes(context.resolve(valueFile));
    } catch (IOException e) {
      String why = e instanceof NoSuchFileException ? "no such file" : e.getMessage();
      throw new ConfigException("--value-file: cannot read " + valueFile + ": " + why);
    }
  }
}
