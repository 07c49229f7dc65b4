package dev.fencekeeper.config;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/** Configuration from the environment: one {@code FENCEKEEPER_} variable per key. */
final class ConfigEnvironment {
  private ConfigEnvironment() {}

  static String variable(String key) {
    return ClusterConfig.ENVIRONMENT_PREFIX
        + key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
  }

  /** See {@link ClusterConfig#load(Path, Map)}. */
  static ClusterConfig load(Path file, Map<String, String> env) {
    Properties fromEnv = new Properties();
    List<String> used = new ArrayList<>();
    for (String key : Keys.NAMES) {
      String variable = variable(key);
      String value = env.get(variable);
      if (value != null) {
        fromEnv.setProperty(key, value);
        used.add(variable);
      }
    }
    if (file == null && used.isEmpty()) {
      throw new ConfigException(
          "no config: give a properties file, or set "
              + variable(Keys.PEERS.name())
              + " and "
              + variable(Keys.NODE_ID.name())
              + " (every key has a FENCEKEEPER_ variable)");
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
