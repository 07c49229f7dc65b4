package dev.fencekeeper.server.local;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.server.FencekeeperServer;
import java.nio.file.Path;
import java.util.List;

/**
 * TEST ONLY: runs one node from the arguments a {@link NodeCommand} gives ({@code server --config
 * FILE --parent-pid PID [--join]}), as the command line's {@code server} does: SIGTERM closes it,
 * and it exits when the JVM that started it is gone.
 */
public final class TestNodeMain {
  private TestNodeMain() {}

  public static void main(String[] args) throws Exception {
    List<String> words = List.of(args);
    Path configFile = Path.of(words.get(words.indexOf("--config") + 1));
    long parent = Long.parseLong(words.get(words.indexOf("--parent-pid") + 1));
    ClusterConfig config = ClusterConfig.load(configFile);
    FencekeeperServer server =
        words.contains("--join") ? FencekeeperServer.join(config) : FencekeeperServer.start(config);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    server.close();
                  } catch (Exception e) {
                    e.printStackTrace();
                  }
                }));
    ProcessHandle.of(parent).ifPresent(p -> p.onExit().thenRun(() -> System.exit(0)));
    System.out.println("node " + config.self().id() + " serving");
    Thread.currentThread().join();
  }

  /** A node that does not stop on SIGTERM: its shutdown hook never ends. */
  public static final class IgnoringSigterm {
    private IgnoringSigterm() {}

    public static void main(String[] args) throws Exception {
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    try {
                      Thread.sleep(Long.MAX_VALUE);
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                  }));
      TestNodeMain.main(args);
    }
  }
}
