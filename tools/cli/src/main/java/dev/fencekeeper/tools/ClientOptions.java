package dev.fencekeeper.tools;

import dev.fencekeeper.client.FencingAdmin;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.config.Security;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The options every client verb shares: which cluster to talk to, how, and how to print the answer.
 */
public final class ClientOptions {
  private static final String RATIS_LOGGER = "org.apache.ratis"; // its shaded gRPC included
  private static final String CONNECTION_LOGGER = "dev.fencekeeper.client.connection";
  // A retry that Ratis's client had scheduled before the verb gave up fires after the verb closed
  // the client, and is logged at ERROR with a stack trace ("already CLOSED"): noise after a result
  // already printed.
  private static final String RATIS_CLIENT_RPC_LOGGER = "org.apache.ratis.grpc.client";
  private static final String LOG_LEVEL_PROPERTY = "fencekeeper.log.level";

  /** A certificate directory as --certs takes: TLS for every verb without the flags. */
  static final String ENV_TLS_CERTS = "FENCEKEEPER_TLS_CERTS";

  private final CliContext context;

  @Spec(Spec.Target.MIXEE)
  private CommandSpec mixee;

  @Option(
      names = "--endpoints",
      paramLabel = "HOST:PORT,...",
      description =
          "The nodes' client ports (each node's client.port, by default its Raft port + 200)."
              + " Default: $FENCEKEEPER_ENDPOINTS, else the three nodes `up` starts"
              + " (127.0.0.1:7501..7503, or from $FENCEKEEPER_BASE_PORT).")
  private String endpoints;

  @Option(
      names = "--peers",
      paramLabel = "ID@HOST:PORT,...",
      description =
          "Deprecated: the nodes' Raft addresses (also $FENCEKEEPER_PEERS); use --endpoints.")
  private String peers;

  // The deprecation warning is printed once per command, however often the cluster is read.
  private boolean warned;

  @Option(
      names = "--json",
      description = "Print one JSON object whose `status` is the result code.")
  private boolean json;

  @Option(
      names = "--tls",
      negatable = true,
      description =
          "Talk mutual TLS, with a certificate from --certs (docs/security.md). Default: on when"
              + " $FENCEKEEPER_TLS_CERTS is set; --no-tls talks plaintext even then.")
  private Boolean tls;

  @Option(
      names = "--certs",
      paramLabel = "DIR",
      description =
          "With --tls: the directory `fencekeeper certs` wrote (ca.crt, <identity>.crt/.key)."
              + " Default: $FENCEKEEPER_TLS_CERTS.")
  private Path certs;

  @Option(
      names = "--identity",
      paramLabel = "NAME",
      description =
          "With --tls: use DIR/NAME.crt and DIR/NAME.key. Default: admin for admin operations"
              + " (members, leader, snapshot, backup, lease revoke), else client.")
  private String identity;

  ClientOptions(CliContext context) {
    this.context = context;
  }

  boolean json() {
    return json;
  }

  CliContext context() {
    return context;
  }

  ClusterConfig cluster() {
    quietRatisWarnings();
    ClusterConfig cluster =
        LocalDefaults.cluster(
            context,
            endpoints,
            peers,
            warning -> {
              if (!warned) {
                warned = true;
                context.err().println(warning);
                context.err().flush();
              }
            });
    // Flags win: --no-tls, or --tls with --certs, ignore the environment.
    String envCerts = context.env(ENV_TLS_CERTS, null);
    boolean useTls = tls != null ? tls : envCerts != null;
    if (!useTls) {
      if (certs != null || identity != null) {
        throw new ConfigException(
            (tls == null ? "" : "with --no-tls: ") + "--certs and --identity need --tls");
      }
      return cluster;
    }
    Path dir;
    if (certs != null) {
      dir = certs;
    } else if (envCerts != null) {
      dir = Path.of(envCerts);
    } else {
      throw new ConfigException(
          "--tls needs --certs DIR or $"
              + ENV_TLS_CERTS
              + " (create one with `fencekeeper certs DIR`)");
    }
    String name =
        identity != null
            ? identity
            : mixee != null && mixee.userObject() instanceof AdminOperation
                ? Certificates.ADMIN
                : Certificates.CLIENT;
    Path absolute = context.resolve(dir).toAbsolutePath();
    return cluster.withSecurity(
        cluster.security().withTls(Security.TlsFiles.inDirectory(absolute, name)));
  }

  /**
   * A client for the cluster. A verb with {@code --timeout} first connects to every node (TCP and
   * TLS set-up, itself bounded by the timeout) and only then starts its deadline ({@link
   * CallOutcome#callSent(CliContext)}): the deadline is the call's, not a cold process's connection
   * set-up. Without {@code --timeout} nodes are contacted when the first call is made.
   */
  FencingClient connect() {
    return connect(cluster());
  }

  /** As {@link #connect()}, for {@code cluster} as this verb has read it. */
  FencingClient connect(ClusterConfig cluster) {
    FencingClient fencing = FencingClient.connect(cluster);
    dialWithinTimeout(Wire.dial(fencing));
    CallOutcome.callSent(context);
    return fencing;
  }

  /** An admin handle for {@code cluster}, connected as {@link #connect()} says. */
  FencingAdmin admin(ClusterConfig cluster) {
    FencingAdmin admin = FencingAdmin.connect(cluster);
    dialWithinTimeout(Wire.dial(admin));
    CallOutcome.callSent(context);
    return admin;
  }

  /**
   * Waits for {@code dialled} when the verb is bounded by {@code --timeout}, at most that long (the
   * deadline's own bound on a verb's preparation ends the wait as well); a verb without one does
   * not wait, and its connections are set up by its first call.
   */
  private void dialWithinTimeout(CompletableFuture<Void> dialled) {
    Optional<Duration> timeout = mixee == null ? Optional.empty() : TimeoutOption.of(mixee);
    if (timeout.isEmpty()) {
      return;
    }
    try {
      dialled.get(timeout.get().toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      // Not connected in time: the call that follows reports what it meets.
    }
  }

  /**
   * Ratis and its gRPC log what a client verb's one result line already says — every failed name
   * lookup of a peer, every refused connection, a retry cut short by the verb's end — as warnings
   * with stack traces, once per retry. A verb names the cause in its result ({@link PeerNames});
   * unless the user asked for more with {@code -Dfencekeeper.log.level}, only Ratis's errors are
   * shown. The client's own "no node answered" line is the verb's UNAVAILABLE result said twice, so
   * it is quieted the same way.
   */
  private static void quietRatisWarnings() {
    if (System.getProperty(LOG_LEVEL_PROPERTY) != null) {
      return;
    }
    for (String name : new String[] {RATIS_LOGGER, CONNECTION_LOGGER}) {
      if (LoggerFactory.getLogger(name) instanceof ch.qos.logback.classic.Logger logger) {
        logger.setLevel(ch.qos.logback.classic.Level.ERROR);
      }
    }
    if (LoggerFactory.getLogger(RATIS_CLIENT_RPC_LOGGER)
        instanceof ch.qos.logback.classic.Logger rpc) {
      rpc.setLevel(ch.qos.logback.classic.Level.OFF);
    }
  }

  /** Marks verbs that need an admin identity under TLS: they default to the admin certificate. */
  interface AdminOperation {}
}
