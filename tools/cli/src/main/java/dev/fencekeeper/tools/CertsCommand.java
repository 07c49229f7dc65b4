package dev.fencekeeper.tools;

import dev.fencekeeper.config.ConfigException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code certs}: a CA and the node, client and admin certificates a local TLS cluster needs. */
@Command(
    name = "certs",
    mixinStandardHelpOptions = true,
    header = "Create a CA and node/client/admin certificates, or one more certificate from it.",
    description = {
      "Writes into DIR: ca.crt and ca.key (the certificate authority), node.crt/node.key (CN "
          + Certificates.NODE_CN
          + ", used by every node), client.crt/client.key (CN "
          + Certificates.CLIENT_CN
          + ") and admin.crt/admin.key (CN "
          + Certificates.ADMIN_CN
          + "). Keys are EC P-256 in PKCS#8 PEM, created readable by their owner only (mode 0600);"
          + " certificates are 0644 and name 127.0.0.1 and localhost, and node.crt also every host"
          + " name or address given with --san.",
      "--add NAME --cn CN issues one more certificate from the CA already in DIR, as NAME.crt"
          + " and NAME.key, naming the hosts given with --san: a node that joins (CN "
          + Certificates.NODE_CN
          + ", which authz.nodes admits by default, and its own address) or a client of its own.",
      "--owner USER[:GROUP] gives the files written to that account (keys stay 0600), e.g. the"
          + " service user a node runs as; ca.key stays with whoever runs certs. Changing an owner"
          + " takes root.",
      "Use them with `fencekeeper up --tls --certs DIR` and `--tls --certs DIR` on every other"
          + " verb. Refuses to overwrite an existing CA, or an existing NAME, unless --force."
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
              + " fk1.example.com,fk2.example.com,10.0.0.3): node.crt (or, with --add, NAME.crt)"
              + " names them besides 127.0.0.1 and localhost.")
  private List<String> san = List.of();

  @Option(
      names = "--add",
      paramLabel = "NAME",
      description =
          "Issue one certificate from the CA in DIR: NAME.crt and NAME.key (letters, digits, . _"
              + " -). Needs --cn.")
  private String add;

  @Option(
      names = "--cn",
      paramLabel = "CN",
      description =
          "With --add: the certificate's subject CN, the identity the cluster sees ("
              + Certificates.NODE_CN
              + " for a node, a name of its own for a client; admins are listed in authz.admins).")
  private String cn;

  @Option(
      names = "--owner",
      paramLabel = "USER[:GROUP]",
      description =
          "Give the files written to this user (and group), e.g. the service user fencekeeper"
              + " runs as; ca.key is never given away.")
  private String owner;

  CertsCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() {
    if (days <= 0) {
      throw new ConfigException("--days: '" + days + "' must be positive");
    }
    if (cn != null && add == null) {
      throw new ConfigException("--cn goes with --add");
    }
    FileOwner fileOwner = owner == null ? null : FileOwner.parse("--owner", owner);
    Path target = context.resolve(dir).toAbsolutePath();
    if (add != null) {
      return addOne(target, fileOwner);
    }
    if (Files.exists(target.resolve("ca.crt")) && !force) {
      throw new ConfigException(
          target.resolve("ca.crt")
              + " already exists; use --force to replace the CA"
              + " (certificates it signed stop working), or --add NAME to issue one more from it");
    }
    try {
      Certificates.writeLocalSet(target, Duration.ofDays(days), san);
    } catch (IllegalArgumentException e) {
      throw new ConfigException("--san: " + e.getMessage());
    }
    if (fileOwner != null) {
      for (String file : Certificates.localSetFiles()) {
        if (!file.equals("ca.key")) {
          fileOwner.apply(target.resolve(file));
        }
      }
    }
    context
        .out()
        .println(
            "wrote "
                + String.join(", ", Certificates.localSetFiles())
                + " to "
                + target
                + (fileOwner == null ? "" : " (all but ca.key owned by " + owner + ")"));
    context.out().println("start a TLS cluster: fencekeeper up --tls --certs " + target);
    context.out().flush();
    return ExitCode.SUCCESS.code();
  }

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

  /** {@code --add NAME}: one more certificate from the CA in {@code target}. */
  private int addOne(Path target, FileOwner fileOwner) {
    if (!NAME.matcher(add).matches() || add.equals("ca")) {
      throw new ConfigException(
          "--add: '" + add + "' must be 1..64 letters, digits, '.', '_' or '-', and not 'ca'");
    }
    if (cn == null
        || cn.isBlank()
        || cn.length() > 64
        || cn.chars().anyMatch(c -> c < 0x20 || c == 0x7f || c == ',')) {
      throw new ConfigException(
          "--add needs --cn CN (1..64 printable characters, no comma): the identity the cluster"
              + " sees, e.g. "
              + Certificates.NODE_CN
              + " for a node");
    }
    Path crt = target.resolve(add + ".crt");
    Path key = target.resolve(add + ".key");
    if ((Files.exists(crt) || Files.exists(key)) && !force) {
      throw new ConfigException(crt + " or its key already exists; use --force to replace them");
    }
    Certificates ca;
    try {
      ca = Certificates.loadAuthority(target);
    } catch (IllegalArgumentException e) {
      throw new ConfigException("--add: " + e.getMessage());
    }
    Instant now = Instant.now();
    Instant notAfter = now.plus(Duration.ofDays(days));
    if (notAfter.isAfter(ca.notAfter())) {
      notAfter = ca.notAfter(); // a certificate outliving its CA would fail from then on anyway
    }
    try {
      ca.issue(target, add, cn, now.minusSeconds(60), notAfter, san);
    } catch (IllegalArgumentException e) {
      throw new ConfigException("--san: " + e.getMessage());
    }
    if (fileOwner != null) {
      fileOwner.apply(crt);
      fileOwner.apply(key);
    }
    List<String> names = new ArrayList<>(List.of("127.0.0.1", "localhost"));
    san.stream().map(String::strip).filter(n -> !names.contains(n)).forEach(names::add);
    context
        .out()
        .println(
            "wrote "
                + crt.getFileName()
                + ", "
                + key.getFileName()
                + " to "
                + target
                + ": CN "
                + cn
                + ", names "
                + String.join(", ", names)
                + ", valid until "
                + notAfter.truncatedTo(ChronoUnit.SECONDS)
                + (fileOwner == null ? "" : ", owned by " + owner));
    context.out().flush();
    return ExitCode.SUCCESS.code();
  }
}
