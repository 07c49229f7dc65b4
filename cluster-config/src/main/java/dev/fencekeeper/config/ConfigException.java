package dev.fencekeeper.config;

/**
 * A cluster description that cannot be used. The message always names the offending key (or file)
 * and the value that was rejected, so an operator can fix the file without reading code, e.g.
 * {@code lease.ttl.min: '5x' is not a duration (use e.g. 500ms, 5s, 2m)}.
 */
public final class ConfigException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public ConfigException(String message) {
    super(message);
  }

  // Package-private: I/O failures keep their cause for the stack trace, but the public contract
  // stays the single-argument constructor other modules code against.
  ConfigException(String message, Throwable cause) {
    super(message, cause);
  }
}
