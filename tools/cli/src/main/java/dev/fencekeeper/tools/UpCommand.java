package dev.fencekeeper.tools;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.config.PropertyNames;
import dev.fencekeeper.config.Security;
import dev.fencekeeper.tools.ClusterProbe.NodeStatus;
import dev.fencekeeper.tools.LocalClusterLayout.Node;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code up}: a three-node cluster on this machine, one process per node, until Ctrl-C. */
@Command(
    name = "up",
    mixinStandardHelpOptions = true,
    header = "Run a three-node cluster on this machine until Ctrl-C.",
    description = {
      "Starts nodes n1, n2, n3 on 127.0.0.1 (one process each) and prints each node's id, address,"
          + " pid, log file, metrics URL (each node serves /metrics on its port + 100) and client"
          + " address (the client protocol, on its port + 200). Ctrl-C"
          + " or SIGTERM stops every node (exit 0). Starting again on the same --data-dir resumes"
          + " the same state and token sequence. A node that dies is reported; the others keep"
          + " serving.",
      "Exit 2 if a port is taken or the data dir holds another cluster, 11 if every node exited."
    })
final class UpCommand implements Callable<Integer> {
  private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(1);
  private static final Duration PROBE_INTERVAL = Duration.ofMillis(200);
  private static final Duration SLOW_START_WARNING = Duration.ofSeconds(30);
  private static final Duration STOP_GRACE = Duration.ofSeconds(10);

  private final CliContext context;

  @Option(
      names = "--data-dir",
      paramLabel = "DIR",
      description = "Node configs and data. Default: $FENCEKEEPER_DATA_DIR, else ./data.")
  private Path dataDirFlag;

  @Option(
      names = "--base-port",
      paramLabel = "PORT",
      description =
          "Nodes n1, n2, n3 listen on PORT, PORT+1, PORT+2. Default: $FENCEKEEPER_BASE_PORT, else"
              + " 7301.")
  private Integer basePortFlag;

  @Option(
      names = "--tls",
      description = "Mutual TLS between nodes and for clients, with the certificates in --certs.")
  private boolean tls;

  @Option(
      names = "--certs",
      paramLabel = "DIR",
      description =
          "With --tls: the directory `fencekeeper certs DIR` wrote. Nodes use node.crt; admin.crt's"
              + " CN is the admin.")
  private Path certs;

  UpCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() throws IOException, InterruptedException {
    Path dataDir = LocalDefaults.dataDir(context, dataDirFlag);
    int basePort = LocalDefaults.basePort(context, basePortFlag);
    Security security = nodeSecurity();
    List<Node> nodes = LocalClusterLayout.prepare(dataDir, basePort, security);
    refuseIfAnyPortInUse(nodes);

    context
        .out()
        .println(
            "fencekeeper up: 3 nodes on 127.0.0.1"
                + (tls ? " with mutual TLS" : "")
                + ", data in "
                + dataDir
                + " (Ctrl-C stops them)");
    NodeProcesses processes = NodeProcesses.start(nodes, context.out());
    Termination termination = Termination.onSignal(() -> stop(processes));
    for (Node node : nodes) {
      context
          .out()
          .println(
              node.id()
                  + "  "
                  + node.peer().address()
                  + "  pid "
                  + processes.pid(node)
                  + "  log "
                  + node.logFile()
                  + (node.metricsPort() > 0 ? "  metrics " + node.metricsUrl() : "  metrics off")
                  + "  client "
                  + node.clientAddress().address()
                  + (node.httpPort() > 0 ? "  http " + node.httpUrl(tls) : "  http off"));
    }
    context.out().flush();

    ClusterConfig probe = ClusterConfig.local(basePort);
    if (tls) {
      probe =
          probe.withSecurity(
              probe
                  .security()
                  .withTls(
                      Security.TlsFiles.inDirectory(
                          security.tls().cert().getParent(), Certificates.CLIENT)));
    }
    awaitLeader(probe, processes);
    processes.awaitAllExited();
    if (processes.isStopping()) {
      // A signal is stopping the nodes; its hook reports that and ends the process with 0.
      Thread.currentThread().join();
    }
    // Every node died by itself: nothing is left to serve or to stop.
    termination.close();
    context.err().println("fencekeeper up: every node has exited; their logs are in " + dataDir);
    return ExitCode.UNAVAILABLE.code();
  }

  /**
   * What the nodes' configs say about TLS: plaintext, or node.crt with admin.crt's CN as the admin.
   */
  private Security nodeSecurity() {
    if (!tls) {
      if (certs != null) {
        throw new ConfigException("--certs needs --tls");
      }
      return Security.none();
    }
    if (certs == null) {
      throw new ConfigException(
          "--tls needs --certs DIR (create one with `fencekeeper certs DIR`)");
    }
    Path dir = context.resolve(certs).toAbsolutePath();
    return Security.none()
        .withTls(Security.TlsFiles.inDirectory(dir, Certificates.NODE))
        .withAdmins(java.util.Set.of(Certificates.ADMIN_CN));
  }

  private void stop(NodeProcesses processes) {
    context.out().println("stopping all nodes...");
    context.out().flush();
    processes.stopAll(STOP_GRACE);
    context.out().println("all nodes stopped");
    context.out().flush();
  }

  /** A node that cannot bind its ports would die at once; better to say why before starting any. */
  private static void refuseIfAnyPortInUse(List<Node> nodes) {
    for (Node node : nodes) {
      PeerAddress peer = node.peer();
      refuseIfInUse(peer.port(), peer.id());
      refuseIfInUse(node.clientAddress().port(), peer.id() + " client");
      if (node.metricsPort() > 0) {
        refuseIfInUse(node.metricsPort(), peer.id() + " metrics");
      }
      if (node.httpPort() > 0) {
        refuseIfInUse(node.httpPort(), peer.id() + " JSON gateway");
      }
    }
  }

  private static void refuseIfInUse(int port, String what) {
    try (ServerSocket probe = new ServerSocket()) {
      // The same as the node's own bind: only a live listener blocks it, not TIME_WAIT leftovers.
      probe.setReuseAddress(true);
      probe.bind(new InetSocketAddress(port));
    } catch (IOException e) {
      throw new ConfigException(
          "port "
              + port
              + " ("
              + what
              + ") is already in use: is another"
              + " `fencekeeper up` running? Stop it, or choose other ports with --base-port.");
    }
  }

  /**
   * The line to export in a shell to reach this cluster from the command line, the Node client and
   * any other client: the nodes' client ports. The one place {@code up} says them.
   */
  static String endpointsLine(ClusterConfig cluster) {
    return "export " + LocalDefaults.ENV_ENDPOINTS + "=" + LocalDefaults.endpointsValue(cluster);
  }

  /** The same addresses as a Spring Boot application's property. */
  static String applicationEndpointsLine(ClusterConfig cluster) {
    return "fencekeeper." + PropertyNames.ENDPOINTS + "=" + LocalDefaults.endpointsValue(cluster);
  }

  /** Polls every node until one says it leads; reports once if that takes unusually long. */
  private void awaitLeader(ClusterConfig cluster, NodeProcesses processes)
      throws InterruptedException {
    long started = System.nanoTime();
    boolean warned = false;
    try (FencingClient client = FencingClient.connect(cluster)) {
      while (!processes.running().isEmpty()) {
        List<NodeStatus> nodes = ClusterProbe.probe(client, cluster, PROBE_TIMEOUT);
        Optional<NodeStatus> leader = ClusterProbe.leader(nodes);
        if (leader.isPresent()) {
          context.out().println("cluster ready, leader " + leader.get().peer().id());
          context.out().println(endpointsLine(cluster));
          context.out().println(applicationEndpointsLine(cluster));
          context.out().flush();
          return;
        }
        if (!warned && System.nanoTime() - started > SLOW_START_WARNING.toNanos()) {
          warned = true;
          context
              .err()
              .println(
                  "fencekeeper up: no leader after "
                      + SLOW_START_WARNING.toSeconds()
                      + "s; still waiting (see the node logs)");
        }
        Thread.sleep(PROBE_INTERVAL.toMillis());
      }
    }
  }
}
