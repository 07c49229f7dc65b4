package dev.fencekeeper.proto;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * {@code fencing.proto} is published inside the client jar, at its root, byte for byte the file the
 * client's classes were generated from: applications in other languages generate their stubs from
 * the very file their cluster speaks (docs/protocol.md).
 */
class PublishedProtoTest {
  // Guarantee: the client's classpath (what the jar packs) holds /fencing.proto, identical to
  // the source, with the service in it.
  @Test
  void theProtoIsPackedWithTheClient() throws IOException {
    String packed;
    try (InputStream in = FencekeeperGrpc.class.getResourceAsStream("/fencing.proto")) {
      assertThat(in).as("fencing.proto at the root of the client's classpath").isNotNull();
      packed = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    String source = Files.readString(Path.of("src/main/proto/fencing.proto"));
    assertThat(packed).isEqualTo(source).contains("service Fencekeeper {");
  }
}
