package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

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
