package dev.fencekeeper.client;

import java.nio.charset.StandardCharsets;

/** One key of an atomic multi-key write: a new value or a delete. */
public record KeyChange(String key, byte[] value, boolean delete) {
  /** Sets {@code key} to {@code value}. */
  public static KeyChange put(String key, byte[] value) {
    return new KeyChange(key, value, false);
  }

  /** Sets {@code key} to {@code value} in UTF-8. */
  public static KeyChange put(String key, String value) {
    return new KeyChange(key, value.getBytes(StandardCharsets.UTF_8), false);
  }

  /** Removes {@code key}. */
  public static KeyChange delete(String key) {
    return new KeyChange(key, new byte[0], true);
  }
}
