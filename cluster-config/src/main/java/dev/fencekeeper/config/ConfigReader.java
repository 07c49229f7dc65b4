package dev.fencekeeper.config;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * Turns properties into key values, key by key from {@link Keys#ALL}, collecting every problem so
 * that one run reports them all.
 */
final class ConfigReader {

  private ConfigReader() {}

  /**
   * Every key's value: parsed where {@code p} sets it, else its default; optional keys without a
   * default are absent.
   *
   * @throws ConfigException listing every problem, one line per key
   */
  static Map<ConfigKey<?>, Object> read(Properties p) {
    List<String> problems = new ArrayList<>();
    for (Object key : p.keySet()) {
      if (!(key instanceof String)) {
        problems.add("'" + key + "': keys must be strings, not " + key.getClass().getName());
      }
    }
    for (String key : p.stringPropertyNames().stream().sorted().toList()) {
      if (!Keys.NAMES.contains(key)) {
        problems.add(unknownKey(key, p.getProperty(key)));
      }
    }
    Map<ConfigKey<?>, Object> values = defaults();
    for (ConfigKey<?> key : Keys.ALL) {
      String raw = p.getProperty(key.name());
      if (raw == null) {
        continue;
      }
      // Properties.load keeps trailing blanks, which are invisible in an editor.
      String text = raw.trim();
      if (text.isEmpty()) {
        problems.add(key + ": '" + raw + "' is empty; remove the line to use the default");
        continue;
      }
      try {
        values.put(key, key.parse(text));
      } catch (ConfigException e) {
        problems.add(e.getMessage());
      }
    }
    if (p.getProperty(Keys.PEERS.name()) == null
        && (p.getProperty(Keys.ENDPOINTS.name()) == null
            || p.getProperty(Keys.NODE_ID.name()) != null)) {
      problems.add(missingPeers());
    }
    if (!problems.isEmpty()) {
      // Checked with the keys, so that one run also reports a TLS file that is missing.
      try {
        Security.of(values);
      } catch (ConfigException e) {
        problems.add(e.getMessage());
      }
      throw new ConfigException(joinProblems(problems));
    }
    return values;
  }

  /** Every key that has a default, with it. */
  static Map<ConfigKey<?>, Object> defaults() {
    Map<ConfigKey<?>, Object> values = new LinkedHashMap<>();
    for (ConfigKey<?> key : Keys.ALL) {
      if (key.defaultValue() != null) {
        values.put(key, key.defaultValue());
      }
    }
    return values;
  }

  static String joinProblems(List<String> problems) {
    if (problems.size() == 1) {
      return problems.get(0);
    }
    return problems.size() + " problems:\n  " + String.join("\n  ", problems);
  }

  private static String unknownKey(String key, String value) {
    String closest = null;
    int best = Integer.MAX_VALUE;
    for (String known : Keys.NAMES) {
      int distance = editDistance(key, known);
      if (distance < best) {
        best = distance;
        closest = known;
      }
    }
    String message = key + ": unknown key (value '" + value + "')";
    // Up to three edits catches transpositions and dropped or doubled letters without suggesting
    // unrelated keys.
    return best <= 3
        ? message + "; did you mean '" + closest + "'?"
        : message + "; known keys: " + String.join(", ", Keys.NAMES);
  }

  private static int editDistance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int substitution = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        cur[j] = Math.min(substitution, Math.min(prev[j], cur[j - 1]) + 1);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }

  static String missingPeers() {
    return Keys.PEERS
        + ": missing; a node lists every member as id@host:port, e.g. "
        + PeerAddress.LIST_EXAMPLE
        + " (a client names the nodes' client ports instead: "
        + Keys.ENDPOINTS
        + "="
        + PeerAddress.ENDPOINTS_EXAMPLE
        + ")";
  }
}
