package dev.fencekeeper.tools;

import dev.fencekeeper.config.ConfigException;
import dev.fencekeeper.config.Durations;
import java.time.Duration;
import picocli.CommandLine;

/** {@code --ttl 5s}: the same duration syntax as the config files, so a bare "5" is refused. */
public final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
  // Durations names the offending key first; picocli already names the option, so that prefix goes.
  private static final String KEY = "duration";

  @Override
  public Duration convert(String text) {
    Duration d = parse(text);
    if (d.isNegative() || d.isZero()) {
      throw new CommandLine.TypeConversionException("'" + text + "' must be positive");
    }
    return d;
  }

  /**
   * For options where zero means "skip it" ({@code --warmup 0s}): the same syntax, zero allowed.
   */
  public static final class ZeroAllowed implements CommandLine.ITypeConverter<Duration> {
    @Override
    public Duration convert(String text) {
      Duration d = parse(text);
      if (d.isNegative()) {
        throw new CommandLine.TypeConversionException("'" + text + "' must not be negative");
      }
      return d;
    }
  }

  private static Duration parse(String text) {
    try {
      return Durations.parse(KEY, text);
    } catch (ConfigException e) {
      String message = e.getMessage();
      throw new CommandLine.TypeConversionException(
          message.startsWith(KEY + ": ") ? message.substring(KEY.length() + 2) : message);
    }
  }
}
