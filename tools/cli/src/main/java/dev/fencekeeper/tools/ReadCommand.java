package dev.fencekeeper.tools;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.ReadConsistency;
import dev.fencekeeper.client.wire.Wire;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code read}: the stored value of one key with the token that wrote it. */
@Command(
    name = "read",
    mixinStandardHelpOptions = true,
    header = "Read a protected value.",
    description = {
      "Reads <key> of <resource>: the value, the token whose write it accepted, and its version.",
      "Exit 0 FOUND, 10 NOT_FOUND."
    })
final class ReadCommand extends ClientVerb {
  @Parameters(index = "0", paramLabel = "<resource>")
  private String resource;

  @Parameters(index = "1", paramLabel = "<key>")
  private String key;

  @Option(
      names = "--stale",
      description =
          "Read from any one replica without a leader round trip: cheaper, possibly behind."
              + " Never use it to decide who owns a resource.")
  private boolean stale;

  ReadCommand(CliContext context) {
    super(context);
  }

  @Override
  ResultView call(FencingClient fencing) {
    ReadConsistency consistency = stale ? ReadConsistency.STALE : ReadConsistency.LINEARIZABLE;
    return ResultView.ofValue(
        Wire.response(fencing.read(resource, key, consistency)), resource, key);
  }
}
