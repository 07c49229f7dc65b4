package dev.fencekeeper.tools.bench;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.server.RaftConfig;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bench counter-node}: one node of the {@code --baseline ratis} cluster, a {@link
 * CounterStateMachine} on exactly the Raft properties a fencekeeper node built from the same config
 * would use. Started by the bench as a separate process, like {@code server}; not meant to be run
 * by hand.
 */
@Command(
    name = "counter-node",
    hidden = true,
    description =
        "A bare-Ratis counter node for the bench's baseline (same Raft settings as `server`).")
final class CounterNodeCommand implements Callable<Integer> {
  @Option(names = "--config", required = true)
  private Path configFile;

  @Option(names = "--parent-pid")
  private Long parentPid;

  @Override
  public Integer call() throws Exception {
    ClusterConfig config = ClusterConfig.load(configFile.toAbsolutePath());
    RaftServer server =
        RaftServer.newBuilder()
            .setServerId(RaftPeerId.valueOf(config.self().id()))
            .setGroup(RaftConfig.group(config))
            .setProperties(RaftConfig.serverProperties(config))
            .setStateMachine(new CounterStateMachine())
            .setOption(RaftStorage.StartupOption.RECOVER)
            .build();
    server.start();
    CountDownLatch done = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(done::countDown));
    if (parentPid != null) {
      Optional<ProcessHandle> parent = ProcessHandle.of(parentPid);
      parent.ifPresentOrElse(p -> p.onExit().thenRun(done::countDown), done::countDown);
    }
    done.await();
    server.close();
    return 0;
  }
}
