package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
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
    assertThat(Files.readString(dir.resolve("certs/node.key"))).startsWith("-----BEGIN PRIVATE KEY-----");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("certs/admin.key"))))
        .isEqualTo("rw-------");
    String ca = Files.readString(dir.resolve("certs/ca.crt"));

    CliRun again = CliRun.run(dir, "certs", "certs");
    assertThat(again.exitCode()).isEqualTo(ExitCode.USAGE.code());
    assertThat(again.err()).contains("--force");
    assertThat(Files.readString(dir.resolve("certs/ca.crt"))).isEqualTo(ca);

    assertThat(CliRun.run(dir, "certs", "certs", "--force").exitCode()).isEqualTo(ExitCode.SUCCESS.code());
    assertThat(Files.readString(dir.resolve("certs/ca.crt"))).isNotEqualTo(ca);
  }
}
