package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CertsCommandTest {
  @TempDir Path dir;

  @Test
  void writesACaAndThreeIdentitiesAndKeepsAnExistingCa() throws Exception {
    CliRun first = CliRun.run(dir, "certs", "certs");
    assertThat(first.exitCode()).as(first.toString()).isEqualTo(ExitCode.SUCCESS.code());
    for (String file : Certificates.localSetFiles()) {
      assertThat(dir.resolve("certs").resolve(file)).isRegularFile();
    }
    // Ratis's TLS reads only PKCS#8 keys; and keys are the owner's alone.
    assertThat(Files.readString(dir.resolve("certs/node.key")))
        .startsWith("-----BEGIN PRIVATE KEY-----");
    assertThat(
            PosixFilePermissions.toString(
                Files.getPosixFilePermissions(dir.resolve("certs/admin.key"))))
        .isEqualTo("rw-------");
    String ca = Files.readString(dir.resolve("certs/ca.crt"));

    CliRun again = CliRun.run(dir, "certs", "certs");
    assertThat(again.exitCode()).isEqualTo(ExitCode.USAGE.code());
    assertThat(again.err()).contains("--force");
    assertThat(Files.readString(dir.resolve("certs/ca.crt"))).isEqualTo(ca);

    assertThat(CliRun.run(dir, "certs", "certs", "--force").exitCode())
        .isEqualTo(ExitCode.SUCCESS.code());
    assertThat(Files.readString(dir.resolve("certs/ca.crt"))).isNotEqualTo(ca);
  }

  // Guarantee: --san puts real host names and addresses into node.crt, besides 127.0.0.1 and
  // localhost.
  @Test
  void sanNamesTheNodesHosts() throws Exception {
    CliRun run =
        CliRun.run(
            dir, "certs", "certs", "--san", "fk1.example.com,FK2.example.com,10.0.0.7,fd00::7");

    assertThat(run.exitCode()).as(run.toString()).isEqualTo(ExitCode.SUCCESS.code());
    assertThat(subjectNames(dir.resolve("certs/node.crt")))
        .containsExactlyInAnyOrder(
            "dns:localhost",
            "ip:127.0.0.1",
            "dns:fk1.example.com",
            "dns:fk2.example.com",
            "ip:10.0.0.7",
            "ip:fd00:0:0:0:0:0:0:7");
    assertThat(subjectNames(dir.resolve("certs/client.crt")))
        .containsExactlyInAnyOrder("dns:localhost", "ip:127.0.0.1");
  }

  // Guarantee: a --san entry that is neither a host name nor an address is a usage error naming it,
  // and nothing is written.
  @Test
  void badSanIsRefusedBeforeAnythingIsWritten() {
    for (String bad :
        List.of(
            "fk1.example.com,not a host", "under_score.example", "10.0.0.999", "-lead.example")) {
      CliRun run = CliRun.run(dir, "certs", "certs", "--san", bad);

      assertThat(run.exitCode()).as(bad + "\n" + run).isEqualTo(ExitCode.USAGE.code());
      assertThat(run.err()).contains("--san");
      assertThat(dir.resolve("certs/ca.crt")).doesNotExist();
    }
  }

  // Guarantee: --add issues NAME.crt and NAME.key from the CA already in DIR (the CA is not
  // replaced), with the CN and names given, a 0600 key and a 0644 certificate; it refuses without
  // --cn, without a CA, or over an existing NAME without --force, writing nothing.
  @Test
  void addIssuesOneMoreCertificateFromTheExistingCa() throws Exception {
    assertThat(CliRun.run(dir, "certs", "certs").exitCode()).isZero();
    String ca = Files.readString(dir.resolve("certs/ca.crt"));

    CliRun added =
        CliRun.run(
            dir,
            "certs",
            "certs",
            "--add",
            "n4",
            "--cn",
            "fencekeeper-node",
            "--san",
            "10.0.0.4,fk4.example.com");

    assertThat(added.exitCode()).as(added.toString()).isZero();
    assertThat(Files.readString(dir.resolve("certs/ca.crt"))).isEqualTo(ca);
    X509Certificate n4 = certificate(dir.resolve("certs/n4.crt"));
    X509Certificate authority = certificate(dir.resolve("certs/ca.crt"));
    n4.verify(authority.getPublicKey()); // signed by the existing CA
    assertThat(n4.getSubjectX500Principal().getName()).isEqualTo("CN=fencekeeper-node");
    assertThat(subjectNames(dir.resolve("certs/n4.crt")))
        .containsExactlyInAnyOrder(
            "dns:localhost", "ip:127.0.0.1", "ip:10.0.0.4", "dns:fk4.example.com");
    assertThat(mode(dir.resolve("certs/n4.key"))).isEqualTo("rw-------");
    assertThat(mode(dir.resolve("certs/n4.crt"))).isEqualTo("rw-r--r--");

    CliRun again = CliRun.run(dir, "certs", "certs", "--add", "n4", "--cn", "other");
    assertThat(again.exitCode()).isEqualTo(ExitCode.USAGE.code());
    assertThat(again.err()).contains("--force");
    assertThat(certificate(dir.resolve("certs/n4.crt"))).isEqualTo(n4);

    CliRun noCn = CliRun.run(dir, "certs", "certs", "--add", "billing");
    assertThat(noCn.exitCode()).isEqualTo(ExitCode.USAGE.code());
    assertThat(noCn.err()).contains("--cn");
    CliRun noCa = CliRun.run(dir, "certs", "elsewhere", "--add", "billing", "--cn", "billing");
    assertThat(noCa.exitCode()).isEqualTo(ExitCode.USAGE.code());
    assertThat(noCa.err()).contains("ca.crt");
    assertThat(dir.resolve("certs/billing.crt")).doesNotExist();
    assertThat(dir.resolve("elsewhere/billing.crt")).doesNotExist();
  }

  // Guarantee: --owner gives every file but ca.key to the service user (keys stay 0600), so that
  // user can read its key and nobody else can; an unknown user is refused before anything is
  // written.
  @Test
  void ownerGivesTheKeysToTheServiceUser() throws Exception {
    assumeTrue(ServiceUsers.canSwitchUser(), "needs root and runuser");
    // Directories anyone may enter, so that only the files' own permissions decide.
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    assertThat(CliRun.run(dir, "certs", "root-only").exitCode()).isZero();
    Files.setPosixFilePermissions(
        dir.resolve("root-only"), PosixFilePermissions.fromString("rwxr-xr-x"));
    assertThat(ServiceUsers.canRead("nobody", dir.resolve("root-only/node.crt"))).isTrue();
    assertThat(ServiceUsers.canRead("nobody", dir.resolve("root-only/node.key"))).isFalse();

    CliRun owned = CliRun.run(dir, "certs", "owned", "--owner", "nobody:nogroup");

    assertThat(owned.exitCode()).as(owned.toString()).isZero();
    for (String file : List.of("node.key", "node.crt", "client.key", "ca.crt")) {
      Path path = dir.resolve("owned").resolve(file);
      assertThat(Files.getOwner(path).getName()).as(file).isEqualTo("nobody");
    }
    assertThat(mode(dir.resolve("owned/node.key"))).isEqualTo("rw-------");
    assertThat(Files.getOwner(dir.resolve("owned/ca.key")).getName()).isEqualTo("root");
    Files.setPosixFilePermissions(
        dir.resolve("owned"), PosixFilePermissions.fromString("rwxr-xr-x"));
    assertThat(ServiceUsers.canRead("nobody", dir.resolve("owned/node.key"))).isTrue();
    assertThat(ServiceUsers.canRead("daemon", dir.resolve("owned/node.key"))).isFalse();
    assertThat(ServiceUsers.canRead("nobody", dir.resolve("owned/ca.key"))).isFalse();

    CliRun unknown = CliRun.run(dir, "certs", "unknown", "--owner", "no-such-user-fk");
    assertThat(unknown.exitCode()).isEqualTo(ExitCode.USAGE.code());
    assertThat(unknown.err()).contains("--owner", "no-such-user-fk");
    assertThat(dir.resolve("unknown")).doesNotExist();
  }

  private static String mode(Path file) throws java.io.IOException {
    return PosixFilePermissions.toString(Files.getPosixFilePermissions(file));
  }

  private static X509Certificate certificate(Path file) throws Exception {
    try (InputStream in = Files.newInputStream(file)) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }

  private static List<String> subjectNames(Path certificate) throws Exception {
    X509Certificate cert;
    try (InputStream in = Files.newInputStream(certificate)) {
      cert = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
    List<String> names = new ArrayList<>();
    for (List<?> entry : cert.getSubjectAlternativeNames()) {
      int type = (Integer) entry.get(0);
      names.add((type == 2 ? "dns:" : type == 7 ? "ip:" : type + ":") + entry.get(1));
    }
    return names;
  }
}
