package dev.fencekeeper.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PeerAddressTest {

  // The documented form id@host:port yields its three parts and the gRPC target host:port.
  @Test
  void parsesIdHostPort() {
    PeerAddress p = PeerAddress.parse("n1@127.0.0.1:7301");
    assertThat(p).isEqualTo(new PeerAddress("n1", "127.0.0.1", 7301));
    assertThat(p.address()).isEqualTo("127.0.0.1:7301");
    assertThat(p).hasToString("n1@127.0.0.1:7301");
  }

  // IPv6 literals are bracketed in text and in address(), and stored bare.
  @Test
  void parsesBracketedIpv6() {
    PeerAddress p = PeerAddress.parse("n2@[::1]:7302");
    assertThat(p.host()).isEqualTo("::1");
    assertThat(p.address()).isEqualTo("[::1]:7302");
    assertThat(PeerAddress.parse(p.toString())).isEqualTo(p);
  }

  // Malformed text fails with a message quoting the offending part.
  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '"',
      value = {
        "127.0.0.1:7301|127.0.0.1:7301",
        "n1@127.0.0.1|n1@127.0.0.1",
        "n1@127.0.0.1:0|0",
        "n1@127.0.0.1:65536|65536",
        "n1@127.0.0.1:http|http",
        "n 1@127.0.0.1:7301|n 1",
        "@127.0.0.1:7301|''",
        "n1@::1:7301|n1@::1:7301",
        "n1@bad host:7301|bad host",
        "n1@:7301|''"
      })
  void rejectsMalformed(String text, String quoted) {
    assertThatThrownBy(() -> PeerAddress.parse(text))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(quoted);
  }

  // The record cannot be built in an invalid state, not even bypassing parse().
  @Test
  void constructorValidates() {
    assertThatThrownBy(() -> new PeerAddress("n1", "127.0.0.1", 70000))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("70000");
    assertThatThrownBy(() -> new PeerAddress("x".repeat(65), "h", 1))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("x".repeat(65));
  }
}
