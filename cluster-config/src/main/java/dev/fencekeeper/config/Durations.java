package dev.fencekeeper.config;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one duration syntax used in config files and on the command line: an optionally signed
 * integer followed by {@code ms}, {@code s}, {@code m} or {@code h}, e.g. {@code 250ms}, {@code
 * 5s}, {@code 2m}, {@code -3s}. {@link #format} is its exact inverse.
 *
 * <p>Fractions ("1.5s") and bare numbers other than {@code 0} are refused: a bare "5" is exactly
 * the ambiguity (seconds? milliseconds?) that makes TTL settings wrong by a factor of 1000.
 */
public final class Durations {

  private static final Pattern SYNTAX = Pattern.compile("([+-]?)(\\d+)\\s*(ms|s|m|h)?");
  private static final String HINT = "(use e.g. 500ms, 5s, 2m)";

  private Durations() {}

  /**
   * Parses {@code text}; {@code key} (a property name or a flag such as {@code --ttl}) only feeds
   * the error message. Negative values are returned as such: callers decide whether they are
   * meaningful (a clock offset) or not (a TTL).
   *
   * @throws ConfigException naming {@code key} and {@code text} when the text is not a duration
   */
  public static Duration parse(String key, String text) {
    if (text == null) {
      throw new ConfigException(key + ": missing; expected a duration " + HINT);
    }
    Matcher m = SYNTAX.matcher(text.trim());
    if (!m.matches() || (m.group(3) == null && !isZero(m.group(2)))) {
      throw new ConfigException(key + ": '" + text + "' is not a duration " + HINT);
    }
    long millisPerUnit =
        m.group(3) == null
            ? 1
            : switch (m.group(3)) {
              case "ms" -> 1L;
              case "s" -> 1_000L;
              case "m" -> 60_000L;
              case "h" -> 3_600_000L;
              default -> throw new AssertionError(m.group(3));
            };
    try {
      long millis = Math.multiplyExact(Long.parseLong(m.group(2)), millisPerUnit);
      return Duration.ofMillis("-".equals(m.group(1)) ? -millis : millis);
    } catch (NumberFormatException | ArithmeticException e) {
      throw new ConfigException(key + ": '" + text + "' is too large for a duration");
    }
  }

  /**
   * The shortest text {@link #parse} reads back as {@code d}: "1h" rather than "60m" or
   * "3600000ms"; "0ms" for zero.
   *
   * @throws IllegalArgumentException if {@code d} has sub-millisecond precision, which the syntax
   *     cannot express; rounding would silently change a stored setting
   */
  public static String format(Duration d) {
    if (d.getNano() % 1_000_000 != 0) {
      throw new IllegalArgumentException(d + " is not a whole number of milliseconds");
    }
    long ms;
    try {
      ms = d.toMillis();
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException(d + " is too large to format in milliseconds", e);
    }
    if (ms != 0) {
      if (ms % 3_600_000L == 0) {
        return ms / 3_600_000L + "h";
      }
      if (ms % 60_000L == 0) {
        return ms / 60_000L + "m";
      }
      if (ms % 1_000L == 0) {
        return ms / 1_000L + "s";
      }
    }
    return ms + "ms";
  }

  /** For messages about values that may not be formattable (built in code, not parsed). */
  static String describe(Duration d) {
    try {
      return format(d);
    } catch (IllegalArgumentException e) {
      return d.toString();
    }
  }

  private static boolean isZero(String digits) {
    return digits.chars().allMatch(c -> c == '0');
  }
}
