package dev.fencekeeper.tools;

import dev.fencekeeper.config.ConfigException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code certs}: a CA and the node, client and admin certificates a local TLS cluster needs. */
@Command(
    name = "certs",
    mixinStandardHelpOptions = true,
    header = "Create a CA and node/client/admin certificates for a local TLS cluster.",
    description = {
      "Writes into DIR: ca.crt and ca.key (the certificate authority), node.crt/node.key (CN "
          + Certificates.NODE_CN
          + ", used by every node), client.crt/client.key (CN "
          + Certificates.CLIENT_CN
          + ") and admin.crt/admin.key (CN "
          + Certificates.ADMIN_CN
          + "). Keys are EC P-256 in PKCS#8 PEM, readable by the owner only; certificates name"
          + " 127.0.0.1 and localhost, and node.crt also every host name or address given with"
          + " --san.",
      "Use them with `fencekeeper up --tls --certs DIR` and `--tls --certs DIR` on every other"
          + " verb. Refuses to overwrite an existing CA unless --force."
    })
final class CertsCommand implements Callable<Integer> {
  private final CliContext context;

  @Parameters(
      index = "0",
      paramLabel = "DIR",
      description = "Where to write the files (created if missing).")
  private Path dir;

  @Option(
      names = "--days",
      paramLabel = "N",
      defaultValue = "365",
      description = "Validity in days (default 365).")
  private int days;

  @Option(names = "--force", description = "Replace an existing CA and certificates in DIR.")
  private boolean force;

  @Option(
      names = "--san",
      split = ",",
      paramLabel = "HOST",
      description =
          "Host names or IP addresses the nodes are reached by (comma-separated, e.g."
              + " fk1.example.com,fk2.example.com,10.0.0.3): node.crt names them besides 127.0.0.1"
              + " and localhost.")
  private List<String> san = List.of();

  CertsCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() {
    if (days <= 0) {
      throw new ConfigException("--days: '" + days + "' must be positive");
    }
    Path target = context.resolve(dir).toAbsolutePath();
    if (Files.exists(target.resolve("ca.crt")) && !force) {
      throw new ConfigException(
          target.resolve("ca.crt")
              + " already exists; use --force to replace the CA"
              + " (certificates it signed stop working)");
    }
    try {
      Certificates.writeLocalSet(target, Duration.ofDays(days), san);
    } catch (IllegalArgumentException e) {
      throw new ConfigException("--san: " + e.getMessage());
    }
    context
        .out()
        .println("wrote " + String.join(", ", Certificates.localSetFiles()) + " to " + target);
    context.out().println("start a TLS cluster: fencekeeper up --tls --certs " + target);
    context.out().flush();
    return ExitCode.SUCCESS.code();
  }
}
