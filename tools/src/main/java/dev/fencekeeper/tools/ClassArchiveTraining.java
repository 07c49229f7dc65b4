package dev.fencekeeper.tools;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.server.FencekeeperServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;

/**
 * {@code train-class-archive}: the launcher runs this once per build under {@code
 * -XX:ArchiveClassesAtExit}, so that every later node and command JVM maps the classes it needs
 * from that archive instead of loading and verifying them from the jar. A node JVM spends about a
 * quarter of its start-up CPU on that (2 of 7.5 CPU-seconds when it restarts with 1,000,000 keys;
 * docs/benchmarks.md), and on a two-core machine three nodes starting together share those cores.
 *
 * <p>The training is real use: three nodes in this JVM on free loopback ports, data in a temp dir,
 * and the README's tour of client verbs against them. Whatever the training does not touch still
 * loads from the jar as before; nothing depends on the archive being there.
 */
@Command(
    name = "train-class-archive",
    hidden = true,
    description =
        "Exercise a throwaway in-process cluster so the JVM can archive the classes it loaded.")
final class ClassArchiveTraining implements Callable<Integer> {
  private static final String RESOURCE = "class-archive-training";

  private final CliContext context;

  ClassArchiveTraining(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() throws IOException {
    Path dir = Files.createTempDirectory("fencekeeper-class-archive-");
    List<FencekeeperServer> servers = new ArrayList<>();
    try {
      ClusterConfig cluster =
          ClusterConfig.forPeers(
              List.of(freePort(), freePort(), freePort()).stream()
                  .map(port -> "127.0.0.1:" + port)
                  .collect(Collectors.joining(",")));
      for (PeerAddress peer : cluster.peers()) {
        servers.add(
            FencekeeperServer.start(
                cluster
                    .withNodeId(peer.id())
                    .withStorageDir(dir.resolve(peer.id()))
                    .withMetricsPort(freePort())));
      }
      String peers =
          cluster.peers().stream().map(PeerAddress::address).collect(Collectors.joining(","));
      String token =
          verb(peers, "lease", "acquire", RESOURCE, "--ttl", "30s", "--owner", "trainer", "-q")
              .trim();
      verb(peers, "lease", "show", RESOURCE);
      verb(peers, "write", RESOURCE, "key", "value", "--token", token);
      verb(peers, "write", RESOURCE, "key", "late", "--token", "1", "--json");
      verb(peers, "read", RESOURCE, "key");
      verb(peers, "read", RESOURCE, "key", "--json");
      verb(peers, "lease", "release", RESOURCE, token);
      verb(peers, "status");
      verb(peers, "status", "--json");
      // A restart from a snapshot: the classes that read one are most of what a big node's restart
      // loads.
      verb(peers, "snapshot", "create", "--all");
      FencekeeperServer first = servers.remove(0);
      first.close();
      servers.add(FencekeeperServer.start(first.config()));
      verb(peers, "read", RESOURCE, "key");
      return ExitCode.SUCCESS.code();
    } finally {
      for (FencekeeperServer server : servers) {
        try {
          server.close();
        } catch (IOException | RuntimeException e) {
          context.err().println("fencekeeper: closing a training node: " + e);
        }
      }
      Directories.deleteTree(dir);
    }
  }

  /**
   * Runs one CLI verb in this JVM against the training cluster; returns what it printed on stdout.
   */
  private String verb(String peers, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream discard =
        new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8);
    CliContext inProcess =
        new CliContext(
            new PrintStream(out, true, StandardCharsets.UTF_8),
            discard,
            Map.of("FENCEKEEPER_PEERS", peers),
            context.workingDir());
    int code = FencekeeperCli.execute(inProcess, args);
    String printed = out.toString(StandardCharsets.UTF_8);
    if (code != ExitCode.SUCCESS.code() && code != ExitCode.STALE_TOKEN.code()) {
      throw new IllegalStateException(
          "training verb " + String.join(" ", args) + " exited " + code + ": " + printed);
    }
    return printed;
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 0, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
