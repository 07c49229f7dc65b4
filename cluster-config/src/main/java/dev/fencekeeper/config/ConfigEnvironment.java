package dev.fencekeeper.config;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

/**
 * Configuration from the environment: one {@code FENCEKEEPER_} variable per key, except the keys
 * that say which cluster to reach ({@link #FILE_ONLY}). Clients are told the cluster by {@code
 * FENCEKEEPER_ENDPOINTS} (and, until it goes, {@code FENCEKEEPER_PEERS}); a node started from a
 * shell that exports them for its clients must not take them as its own members.
 */
final class ConfigEnvironment {
  private ConfigEnvironment() {}

  /** Keys a node reads only from its properties file, never from the environment. */
  static final Set<String> FILE_ONLY = Set.of(Keys.PEERS.name(), Keys.ENDPOINTS.name());

  static String variable(String key) {
    return ClusterConfig.ENVIRONMENT_PREFIX
        + key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
  }

  /** See {@link ClusterConfig#load(Path, Map)}. */
  static ClusterConfig load(Path file, Map<String, String> env) {
    Properties fromEnv = new Properties();
    List<String> used = new ArrayList<>();
    for (String key : Keys.NAMES) {
      if (FILE_ONLY.contains(key)) {
        continue;
      }
      String variable = variable(key);
      String value = env.get(variable);
      if (value != null) {
        fromEnv.setProperty(key, value);
        used.add(variable);
      }
    }
    if (file == null && used.isEmpty()) {
      throw new ConfigException(
          "no config: give a properties file with "
              + Keys.PEERS
              + " (a node reads its members only from its file; every other key may also come"
              + " from a FENCEKEEPER_ variable)");
    }
    if (used.isEmpty()) {
      return ClusterConfig.load(file);
    }
    Properties p = new Properties();
    if (file != null) {
      p.putAll(ConfigFiles.read(file));
    }
    p.putAll(fromEnv);
    try {
      return ClusterConfig.fromProperties(p);
    } catch (ConfigException e) {
      throw new ConfigException(
          (file == null ? "" : file + " with ")
              + "environment "
              + String.join(", ", used)
              + ": "
              + e.getMessage(),
          e);
    }
  }
}
