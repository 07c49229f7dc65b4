package dev.fencekeeper.tools;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.proto.ResultCode;
import java.nio.file.Path;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code backup <file>}: a consistent copy of the whole state, token sequence included. */
@Command(
    name = "backup",
    mixinStandardHelpOptions = true,
    header = "Write a consistent backup of the cluster.",
    description = {
      "Writes every lease, value, write receipt and the token sequence, as of one moment, to"
          + " <file>.",
      "Seed a new cluster from it with `fencekeeper restore`. Exit 0 on success, 11 UNAVAILABLE."
    })
final class BackupCommand extends ClientVerb implements ClientOptions.AdminOperation {
  @Parameters(index = "0", paramLabel = "<file>")
  private Path file;

  BackupCommand(CliContext context) {
    super(context);
  }

  @Override
  ResultView call(FencingClient fencing) {
    Path target = context.workingDir().resolve(file);
    return ResultView.ofLease(Wire.response(fencing.backup(target)), target.toString());
  }

  @Override
  int print(ResultView view) {
    if (view.code() != ResultCode.FOUND || client.json()) {
      return super.print(view);
    }
    var r = view.response();
    context
        .out()
        .println(
            "BACKUP "
                + view.resource()
                + ": "
                + r.getTotalBytes()
                + " bytes, "
                + r.getVersion()
                + " resources, newest token "
                + r.getCurrentToken());
    context.out().flush();
    return view.exitCode().code();
  }
}
