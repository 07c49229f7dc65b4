package dev.fencekeeper.tools;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.ConfigException;
import java.nio.file.Path;

/**
 * Where {@code up} puts the local cluster, and so where every client verb looks for it by default.
 * Each flag's default comes from an environment variable first, so a test (or a user with two
 * clusters) can run the README's commands verbatim against a cluster on other ports.
 */
final class LocalDefaults {
  static final String ENV_DATA_DIR = "FENCEKEEPER_DATA_DIR";
  static final String ENV_BASE_PORT = "FENCEKEEPER_BASE_PORT";
  static final String ENV_PEERS = "FENCEKEEPER_PEERS";
  static final String DEFAULT_DATA_DIR = "./data";

  private LocalDefaults() {}

  /**
   * {@code flag} if given, else $FENCEKEEPER_DATA_DIR, else ./data; absolute, against the user's
   * cwd.
   */
  static Path dataDir(CliContext context, Path flag) {
    Path dir = flag != null ? flag : Path.of(context.env(ENV_DATA_DIR, DEFAULT_DATA_DIR));
    return context.resolve(dir).toAbsolutePath();
  }

  /** {@code flag} if given, else $FENCEKEEPER_BASE_PORT, else 7301. */
  static int basePort(CliContext context, Integer flag) {
    if (flag != null) {
      return flag;
    }
    String text = context.env(ENV_BASE_PORT, null);
    if (text == null) {
      return ClusterConfig.DEFAULT_BASE_PORT;
    }
    try {
      return Integer.parseInt(text);
    } catch (NumberFormatException e) {
      throw new ConfigException(ENV_BASE_PORT + ": '" + text + "' is not a port number");
    }
  }

  /** {@code flag} if given, else $FENCEKEEPER_PEERS, else the three nodes {@code up} starts. */
  static ClusterConfig cluster(CliContext context, String peersFlag) {
    String peers = peersFlag != null ? peersFlag : context.env(ENV_PEERS, null);
    if (peers != null) {
      try {
        return ClusterConfig.forPeers(peers);
      } catch (ConfigException e) {
        throw new ConfigException(
            (peersFlag != null ? "--peers" : ENV_PEERS) + ": " + e.getMessage());
      }
    }
    return ClusterConfig.local(basePort(context, null));
  }
}
