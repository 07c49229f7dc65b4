package dev.fencekeeper.tools;

import dev.fencekeeper.config.Limits;
import dev.fencekeeper.core.FencingState;
import dev.fencekeeper.statemachine.RestoreSeed;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code restore <file>}: seed the storage of new, empty nodes from a backup. */
@Command(
    name = "restore",
    mixinStandardHelpOptions = true,
    header = "Seed a new cluster from a backup.",
    description = {
      "Places <file> in the storage directory of each new node; on first start each node begins"
          + " from the",
      "backup's state, and every token it issues exceeds every token the backed-up cluster ever"
          + " issued,",
      "even one issued after the backup. Refuses nodes that already hold Raft data.",
      "  fencekeeper restore cluster.backup --data-dir ./restored && fencekeeper up --data-dir"
          + " ./restored",
      "Exit 0 on success, 2 when the file or a target directory is refused."
    })
final class RestoreCommand implements Callable<Integer> {
  private final CliContext context;

  @Parameters(index = "0", paramLabel = "<file>")
  private Path file;

  @ArgGroup(exclusive = true, multiplicity = "1")
  private Target target;

  static final class Target {
    @Option(
        names = "--data-dir",
        paramLabel = "DIR",
        description =
            "A data directory laid out as `up` uses it: seeds DIR/<id> for every --nodes id.")
    Path dataDir;

    @Option(
        names = "--storage-dir",
        paramLabel = "DIR",
        description = "The storage.dir of one node.")
    Path storageDir;
  }

  @Option(
      names = "--nodes",
      split = ",",
      paramLabel = "ID,...",
      defaultValue = "n1,n2,n3",
      description = "Node ids under --data-dir (default: ${DEFAULT-VALUE}).")
  private List<String> nodes;

  RestoreCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() {
    Path backup = context.workingDir().resolve(file);
    List<Path> dirs = new ArrayList<>();
    if (target.storageDir != null) {
      dirs.add(context.workingDir().resolve(target.storageDir));
    } else {
      for (String id : nodes) {
        dirs.add(context.workingDir().resolve(target.dataDir).resolve(id));
      }
    }
    try {
      FencingState state = RestoreSeed.read(backup, Limits.defaults());
      for (Path dir : dirs) {
        RestoreSeed.seed(backup, dir, Limits.defaults());
      }
      context
          .out()
          .println(
              "RESTORED "
                  + backup
                  + " into "
                  + dirs
                  + ": "
                  + state.resources().size()
                  + " resources; new tokens start above "
                  + FencingState.nextEpochFloor(state.lastIssuedToken()));
      context.out().flush();
      return ExitCode.SUCCESS.code();
    } catch (IOException e) {
      context.err().println("restore refused: " + e.getMessage());
      return ExitCode.USAGE.code();
    }
  }
}
