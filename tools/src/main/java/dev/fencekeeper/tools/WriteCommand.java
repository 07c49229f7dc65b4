package dev.fencekeeper.tools;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.KeyChange;
import dev.fencekeeper.client.wire.Wire;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code write}: one fenced write (or delete) of one key. */
@Command(
    name = "write",
    mixinStandardHelpOptions = true,
    header = "Write (or delete) a protected value, fenced by a token.",
    description = {
      "Writes <value> to <key> of <resource>, or deletes <key> with --delete. Accepted only while --token"
          + " is the resource's live lease and no newer token has written the key.",
      "Exit 0 ACCEPTED, 6 STALE_TOKEN, 7 LEASE_EXPIRED, 8 UNKNOWN_TOKEN, 9 INVALID_ARGUMENT."
    })
final class WriteCommand extends ClientVerb {
  @Parameters(index = "0", paramLabel = "<resource>") private String resource;
  @Parameters(index = "1", paramLabel = "<key>") private String key;

  @Parameters(index = "2", arity = "0..1", paramLabel = "<value>", description = "The new value (UTF-8).")
  private String value;

  @Option(names = "--delete", description = "Remove <key> instead of writing a value.")
  private boolean delete;

  @Option(names = "--token", required = true, paramLabel = "N", description = "The fencing token of your lease.")
  private long token;

  @Option(names = "--request-id", paramLabel = "ID",
      description = "Makes a retry safe: a write repeated with the same id under the same lease is applied once.")
  private String requestId;

  WriteCommand(CliContext context) {
    super(context);
  }

  @Override
  void checkOptions() {
    if (delete == (value != null)) {
      throw usageError(delete ? "give either <value> or --delete, not both" : "missing <value> (or --delete)");
    }
  }

  @Override
  ResultView call(FencingClient fencing) {
    KeyChange change = delete ? KeyChange.delete(key) : KeyChange.put(key, value);
    return ResultView.ofValue(Wire.response(fencing.write(resource, token, List.of(change), requestId)), resource, key);
  }
}
