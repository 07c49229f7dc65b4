package dev.fencekeeper.client;

import java.nio.charset.StandardCharsets;

/** One key of an atomic multi-key write: a new value or a delete. */
public record KeyChange(String key, byte[] value, boolean delete) {
  /**
   * Refuses a change no write could be built from before it reaches a batch.
   *
   * @throws NullPointerException if {@code key} or {@code value} is null
   */
  public KeyChange {
    java.util.Objects.requireNonNull(key, "key must not be null");
    java.util.Objects.requireNonNull(
        value, "value of key '" + key + "' must not be null (delete a key with delete(key))");
  }

  /** Sets {@code key} to {@code value}. */
  public static KeyChange put(String key, byte[] value) {
    return new KeyChange(key, value, false);
  }

  /** Sets {@code key} to {@code value} in UTF-8. */
  public static KeyChange put(String key, String value) {
    return new KeyChange(key, utf8(value), false);
  }

  static byte[] utf8(String value) {
    java.util.Objects.requireNonNull(
        value, "value must not be null (delete a key with delete(key))");
    return value.getBytes(StandardCharsets.UTF_8);
  }

  /** Removes {@code key}. */
  public static KeyChange delete(String key) {
    return new KeyChange(key, new byte[0], true);
  }
}
