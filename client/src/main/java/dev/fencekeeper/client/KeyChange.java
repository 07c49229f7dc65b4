package dev.fencekeeper.client;

import java.nio.charset.StandardCharsets;

/** One key of an atomic multi-key write: a new value or a delete. */
public record KeyChange(String key, byte[] value, boolean delete) {
  public static KeyChange put(String key, byte[] value) {
    return new KeyChange(key, value, false);
  }

  public static KeyChange put(String key, String value) {
    return new KeyChange(key, value.getBytes(StandardCharsets.UTF_8), false);
  }

  public static KeyChange delete(String key) {
    return new KeyChange(key, new byte[0], true);
  }
}
