package dev.fencekeeper.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencekeeper.config.Security;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The client's TLS context, built without Ratis: from PEM files or the application's managers. */
class ClientTlsTest {
  @TempDir Path dir;

  // Guarantee: files that hold no certificate or key are refused at once, naming the files.
  @Test
  void filesThatAreNoPemAreRefusedByName() throws Exception {
    Security.TlsFiles files =
        new Security.TlsFiles(
            Files.writeString(dir.resolve("app.crt"), "not a certificate"),
            Files.writeString(dir.resolve("app.key"), "not a key"),
            Files.writeString(dir.resolve("ca.crt"), "not a CA"));
    assertThatThrownBy(() -> ClientTls.fromFiles(files))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("cannot use the TLS files " + files.cert())
        .hasMessageContaining(files.trust().toString());
  }

  // Guarantee: the application's own key and trust managers make a client context.
  @Test
  void managersMakeAClientContext() throws Exception {
    KeyStore empty = KeyStore.getInstance(KeyStore.getDefaultType());
    empty.load(null, null);
    var context =
        ClientTls.fromManagers(
            ClientSettings.keyManager(empty, new char[0]), ClientSettings.trustManager(empty));
    assertThat(context.isClient()).isTrue();
  }
}
