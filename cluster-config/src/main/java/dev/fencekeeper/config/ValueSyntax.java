package dev.fencekeeper.config;

import dev.fencekeeper.config.ConfigKey.Bound;
import dev.fencekeeper.config.ConfigKey.Syntax;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The value syntaxes of config keys and the bounds they share, each written once: {@link Keys}
 * combines them into keys.
 */
final class ValueSyntax {

  private static final Pattern SIZE = Pattern.compile("([+-]?\\d+)\\s*(KiB|MiB)?");
  private static final Pattern WHOLE_NUMBER = Pattern.compile("[+-]?\\d+");

  /** {@code 250ms}, {@code 5s}, {@code 2m}, {@code 1h}, as {@link Durations} reads them. */
  static final Syntax<Duration> DURATION =
      new Syntax<>("duration", Durations::parse, Durations::format);

  /** Bytes, optionally with a KiB or MiB suffix; written back as plain bytes. */
  static final Syntax<Integer> SIZE_BYTES =
      new Syntax<>(
          "size (bytes, KiB, MiB)",
          (key, text) -> {
            Matcher m = SIZE.matcher(text);
            if (!m.matches()) {
              throw new ConfigException(
                  key + ": '" + text + "' is not a size (use e.g. 512, 64KiB, 1MiB)");
            }
            long unit = m.group(2) == null ? 1 : "KiB".equals(m.group(2)) ? 1L << 10 : 1L << 20;
            long bytes;
            try {
              bytes = Math.multiplyExact(Long.parseLong(m.group(1)), unit);
            } catch (NumberFormatException | ArithmeticException e) {
              bytes = m.group(1).startsWith("-") ? Long.MIN_VALUE : Long.MAX_VALUE;
            }
            return toInt(key, text, bytes);
          },
          String::valueOf);

  /** A whole number that fits an int. */
  static final Syntax<Integer> COUNT =
      new Syntax<>(
          "whole number", (key, text) -> toInt(key, text, wholeNumber(key, text)), String::valueOf);

  /** A whole number that fits a long. */
  static final Syntax<Long> LONG =
      new Syntax<>(
          "whole number",
          (key, text) -> {
            long n = wholeNumber(key, text);
            if (n == Long.MAX_VALUE || n == Long.MIN_VALUE) {
              throw new ConfigException(key + ": '" + text + "' is too large");
            }
            return n;
          },
          String::valueOf);

  /** A TCP port, 0 standing for none. */
  static final Syntax<Integer> PORT =
      new Syntax<>(
          "port",
          (key, text) -> {
            if (!WHOLE_NUMBER.matcher(text).matches()) {
              throw new ConfigException(
                  key + ": '" + text + "' is not a port number (0..65535, 0 disables)");
            }
            long n = wholeNumber(key, text);
            return (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, n));
          },
          String::valueOf);

  static final Syntax<String> TEXT = new Syntax<>("text", (key, text) -> text, text -> text);

  static final Syntax<String> HOST = new Syntax<>("host", (key, text) -> text, text -> text);

  static final Syntax<Path> PATH =
      new Syntax<>(
          "path",
          (key, text) -> {
            try {
              return Path.of(text);
            } catch (InvalidPathException e) {
              throw new ConfigException(
                  key + ": '" + text + "' is not a valid path (" + e.getReason() + ")");
            }
          },
          Path::toString);

  /** {@code id@host:port,...}. */
  static final Syntax<List<PeerAddress>> PEERS =
      new Syntax<>(
          "id@host:port,...",
          (key, text) -> List.copyOf(PeerAddress.parseList(key, text, false)),
          peers -> peers.stream().map(PeerAddress::toString).collect(Collectors.joining(",")));

  /** {@code host:port,...} of client ports; held as peers with ids n1, n2, ... in order. */
  static final Syntax<List<PeerAddress>> ENDPOINTS =
      new Syntax<>(
          "host:port,...",
          (key, text) -> List.copyOf(PeerAddress.parseEndpoints(key, text)),
          endpoints ->
              endpoints.stream().map(PeerAddress::address).collect(Collectors.joining(",")));

  /** Certificate CNs, comma-separated; written back sorted. */
  static final Syntax<Set<String>> CNS =
      new Syntax<>(
          "CN,CN,...",
          (key, text) -> Set.copyOf(Security.parseCns(key, text)),
          cns -> String.join(",", new TreeSet<>(cns)));

  static <T extends Comparable<T>> Bound<T> atLeast(T min, String problem, String doc) {
    return Bound.of(value -> value.compareTo(min) >= 0, problem, doc);
  }

  static <T extends Comparable<T>> Bound<T> atMost(T max, String problem, String doc) {
    return Bound.of(value -> value.compareTo(max) <= 0, problem, doc);
  }

  static final Bound<Integer> POSITIVE_INT = Bound.of(n -> n > 0, "must be positive", "> 0");

  static final Bound<Long> POSITIVE_LONG = Bound.of(n -> n > 0, "must be positive", "> 0");

  static final Bound<Duration> POSITIVE_DURATION =
      Bound.of(d -> !d.isNegative() && !d.isZero(), "must be positive", "> 0");

  /** Sub-millisecond durations could not be written back to a file (see Durations.format). */
  static final Bound<Duration> WHOLE_MILLIS =
      Bound.of(
          d -> d.getNano() % 1_000_000 == 0, "must be a whole number of milliseconds", "whole ms");

  /**
   * Positive whole milliseconds, at most a year: guards {@code toMillis()} overflow in every
   * consumer, and no lease outlives a year in any sane setup.
   */
  static final List<Bound<Duration>> LEASE_DURATION =
      List.of(
          POSITIVE_DURATION,
          WHOLE_MILLIS,
          atMost(Duration.ofDays(365), "exceeds 365 days", "<= 365 days"));

  static final List<Bound<Duration>> TIMEOUT = List.of(POSITIVE_DURATION, WHOLE_MILLIS);

  private static long wholeNumber(String key, String text) {
    if (!WHOLE_NUMBER.matcher(text).matches()) {
      throw new ConfigException(key + ": '" + text + "' is not a whole number");
    }
    try {
      return Long.parseLong(text);
    } catch (NumberFormatException e) {
      return text.startsWith("-") ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
  }

  /** {@code n} as an int; below the int range it stays non-positive, so a bound refuses it. */
  private static int toInt(String key, String text, long n) {
    if (n > Integer.MAX_VALUE) {
      throw new ConfigException(
          key + ": '" + text + "' is too large (at most " + Integer.MAX_VALUE + ")");
    }
    return (int) Math.max(Integer.MIN_VALUE, n);
  }

  private ValueSyntax() {}
}
