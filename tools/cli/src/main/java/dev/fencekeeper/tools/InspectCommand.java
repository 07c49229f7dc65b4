package dev.fencekeeper.tools;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.ReadConsistency;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/**
 * {@code inspect}: one key with everything that decides whether the next write to it is accepted.
 */
@Command(
    name = "inspect",
    mixinStandardHelpOptions = true,
    header = "Show a key with its resource's lease and newest token.",
    description = {
      "Reads <key> of <resource> (value, the token whose write it accepted, version, when it was"
          + " written)",
      "and the resource's live lease (token, owner, time left) and newest token: a write is"
          + " accepted only",
      "with the live lease's token, and never with one older than the key's accepted token.",
      "Exit 0 FOUND, 10 NOT_FOUND (no such key), 11 UNAVAILABLE."
    })
final class InspectCommand implements Callable<Integer> {
  private final CliContext context;

  @Mixin private ClientOptions client;

  @Mixin private TimeoutOption deadline;

  @Parameters(index = "0", paramLabel = "<resource>")
  private String resource;

  @Parameters(index = "1", paramLabel = "<key>")
  private String key;

  InspectCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() {
    Response read;
    Response lease;
    try (FencingClient fencing = client.connect()) {
      read = Wire.response(fencing.read(resource, key, ReadConsistency.LINEARIZABLE));
      lease = Wire.response(fencing.lease(resource));
    }
    ResultView value = ResultView.ofValue(read, resource, key);
    if (read.getCode() != ResultCode.FOUND && read.getCode() != ResultCode.NOT_FOUND) {
      return new Report(value.exitCode(), value.json(), List.of(value.humanLine()))
          .print(context, client.json());
    }
    ObjectNode json = value.json();
    ObjectNode leaseJson = ResultView.ofLeaseQuery(lease, resource).json();
    leaseJson.remove("resource");
    json.set("lease", leaseJson);

    List<String> lines = new ArrayList<>();
    lines.add(value.humanLine());
    if (read.getCode() == ResultCode.FOUND) {
      lines.add(
          "  written "
              + ListingCommands.instant(read.getWrittenAtMs())
              + " (state-machine time) with token "
              + read.getAcceptedToken());
    }
    lines.add("  " + leaseLine(lease));
    return new Report(value.exitCode(), json, lines).print(context, client.json());
  }

  private static String expiry(String expiresIn) {
    return expiresIn.startsWith("in ") ? "expires " + expiresIn : expiresIn;
  }

  private static String leaseLine(Response lease) {
    return switch (lease.getCode()) {
      case FOUND ->
          lease.getLive()
              ? "lease token="
                  + lease.getToken()
                  + " owner "
                  + lease.getHolderOwner()
                  + ", "
                  + expiry(ListingCommands.expiresIn(lease.getExpiresAtMs(), lease.getNowMs()))
                  + "; newest token "
                  + lease.getCurrentToken()
              : "no live lease; newest token " + lease.getCurrentToken();
      case NOT_FOUND -> "never leased";
      default -> "lease unknown: " + lease.getCode() + " " + lease.getMessage();
    };
  }
}
