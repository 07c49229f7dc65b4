package dev.fencekeeper.tools.bench;

import dev.fencekeeper.config.ConfigException;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;

/**
 * When in a cluster's life a figure is taken. {@link #COLD}: soon after the cluster is up, as a
 * user's first benchmark after a deploy, a restart or a failover sees it; {@link #SETTLED}: after
 * the JIT warm-up, once the node JVMs' compilers have caught up with the hot paths. A run measures
 * the cold phase first: the settled phase's warm-up would leave nothing cold.
 */
enum Phase {
  COLD,
  SETTLED;

  /** The name {@code --phases} takes and the JSON's {@code phase} field says. */
  String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * The phases named in {@code --phases}, in the order a run measures them; unknown or no names are
   * refused.
   */
  static List<Phase> parse(String names) {
    EnumSet<Phase> chosen = EnumSet.noneOf(Phase.class);
    for (String part : names.split(",", -1)) {
      String name = part.trim();
      Phase phase = null;
      for (Phase p : values()) {
        if (p.label().equals(name)) {
          phase = p;
        }
      }
      if (phase == null) {
        throw new ConfigException(
            "--phases: '"
                + name
                + "' is not known; choose cold, settled or cold,settled (comma-separated)");
      }
      chosen.add(phase);
    }
    return List.copyOf(chosen);
  }
}
