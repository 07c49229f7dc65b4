package dev.fencekeeper.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class DurationsTest {

  // Each documented unit means what an operator expects, and a sign is honoured (clock.offset=-3s).
  @ParameterizedTest
  @CsvSource({
    "250ms,250",
    "5s,5000",
    "2m,120000",
    "1h,3600000",
    "-3s,-3000",
    "+3s,3000",
    "0,0",
    "' 7s ',7000",
    "10 ms,10"
  })
  void parsesEveryUnit(String text, long millis) {
    assertThat(Durations.parse("k", text)).isEqualTo(Duration.ofMillis(millis));
  }

  // Ambiguous or malformed text is refused with the key and the text, never guessed at.
  @ParameterizedTest
  @ValueSource(strings = {"5", "5x", "1.5s", "5 sec", "s", "", "5S", "2d", "--5s"})
  void rejectsWhatItCannotReadUnambiguously(String text) {
    assertThatThrownBy(() -> Durations.parse("--ttl", text))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("--ttl")
        .hasMessageContaining("'" + text + "'")
        .hasMessageContaining("500ms, 5s, 2m");
  }

  // Values whose milliseconds overflow a long are an error, not a wrapped-around duration.
  @Test
  void rejectsOverflow() {
    assertThatThrownBy(() -> Durations.parse("lease.ttl.max", "9999999999999999h"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("lease.ttl.max")
        .hasMessageContaining("9999999999999999h");
  }

  // format picks the largest unit that represents the value exactly.
  @ParameterizedTest
  @CsvSource({
    "250,250ms",
    "5000,5s",
    "120000,2m",
    "3600000,1h",
    "90000,90s",
    "0,0ms",
    "-3000,-3s",
    "1001,1001ms",
    "7200000,2h"
  })
  void formatsShortestExactForm(long millis, String text) {
    assertThat(Durations.format(Duration.ofMillis(millis))).isEqualTo(text);
  }

  // format and parse are inverses, so a stored config reads back unchanged.
  @ParameterizedTest
  @ValueSource(
      longs = {1, 999, 1000, 59_999, 60_000, 61_000, 3_599_999, 3_600_000, 86_400_000, -1, -60_000})
  void formatRoundTripsThroughParse(long millis) {
    Duration d = Duration.ofMillis(millis);
    assertThat(Durations.parse("k", Durations.format(d))).isEqualTo(d);
  }

  // Sub-millisecond durations cannot be written exactly, so format refuses rather than rounds.
  @Test
  void formatRefusesSubMillisecondPrecision() {
    assertThatThrownBy(() -> Durations.format(Duration.ofNanos(1_500_000)))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
