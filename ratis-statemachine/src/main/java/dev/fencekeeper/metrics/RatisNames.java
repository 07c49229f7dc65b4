package dev.fencekeeper.metrics;

import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The one rule by which a Ratis metric, as mirrored into a node's registry ({@code
 * <application>.<component>.<metric>}, e.g. {@code ratis.log_appender.follower_n2_match_index}),
 * becomes a Prometheus family and labels:
 *
 * <ol>
 *   <li>a peer id that Ratis writes into the metric's name (first, or after {@code follower_}) is
 *       taken out and becomes the label {@code peer}: {@code
 *       ratis_log_appender_follower_match_index{peer="n2"}};
 *   <li>the rest is snake case: {@code ratis.state_machine.appliedIndex} is {@code
 *       ratis_state_machine_applied_index};
 *   <li>units: timers (nanoseconds in Dropwizard) are summaries in seconds and end in {@code
 *       _seconds}; gauges whose name ends in {@code time} are milliseconds in Ratis ({@code
 *       lastLeaderElapsedTime}, {@code follower_n2_rpc_response_time}) and are exported in seconds,
 *       ending in {@code _seconds};
 *   <li>counters and meters end in {@code _total}; a gauge never ends in a suffix Prometheus
 *       reserves for histograms and summaries: the retry cache's cumulative hit and miss counts are
 *       counters ({@code ratis_server_retry_cache_hits_total}), its size is {@code
 *       ratis_server_retry_cache_entries}, and any other gauge loses a trailing {@code _count}.
 * </ol>
 */
final class RatisNames {
  private static final Pattern LOWER_UPPER = Pattern.compile("([a-z0-9])([A-Z])");
  private static final Pattern ACRONYM_WORD = Pattern.compile("([A-Z]+)([A-Z][a-z])");
  private static final Pattern NOT_NAME = Pattern.compile("[^A-Za-z0-9_]+");
  private static final Pattern UNDERSCORES = Pattern.compile("_+");
  static final String PEER_LABEL = "peer";

  /** Gauges Ratis names as counts that are really a size or a cumulative count. */
  private static final Map<String, Converted> GAUGE_RENAMES =
      Map.of(
          "ratis_server_retry_cache_entry_count",
          new Converted("ratis_server_retry_cache_entries", Kind.GAUGE, null, 1),
          "ratis_server_retry_cache_hit_count",
          new Converted("ratis_server_retry_cache_hits", Kind.COUNTER, null, 1),
          "ratis_server_retry_cache_miss_count",
          new Converted("ratis_server_retry_cache_misses", Kind.COUNTER, null, 1));

  /** The Prometheus type a Ratis metric is rendered as. */
  enum Kind {
    COUNTER,
    GAUGE,
    SUMMARY
  }

  /**
   * A converted name: the family (a counter's without {@code _total}, which the text format adds),
   * its type, the peer it is about (null if none), and what a value is divided by.
   */
  record Converted(String family, Kind kind, String peer, double divisor) {}

  private RatisNames() {}

  /** Whether {@code dropwizardName} is one of Ratis's mirrored metrics. */
  static boolean isRatis(String dropwizardName) {
    return dropwizardName.startsWith("ratis.") || dropwizardName.startsWith("ratis_grpc.");
  }

  /**
   * Converts the mirrored Ratis metric {@code name}, a Dropwizard metric of type {@code
   * dropwizardType} ({@code counter}, {@code meter}, {@code timer}, {@code histogram}, {@code
   * gauge}), given the peer ids of the node's group.
   */
  static Converted convert(String name, String dropwizardType, Set<String> peers) {
    String peer = null;
    String rest = name;
    int component = name.indexOf('.');
    int metric = component < 0 ? -1 : name.indexOf('.', component + 1);
    if (metric > 0) {
      String prefix = name.substring(0, metric + 1);
      String local = name.substring(metric + 1);
      String follower = "follower_";
      for (String id : peers) {
        if (local.startsWith(id + "_") || local.startsWith(id + ".")) {
          peer = id;
          local = local.substring(id.length() + 1);
          break;
        }
        if (local.startsWith(follower + id + "_")) {
          peer = id;
          local = follower + local.substring(follower.length() + id.length() + 1);
          break;
        }
      }
      rest = prefix + local;
    }
    String snake = snake(rest);
    switch (dropwizardType) {
      case "counter", "meter" -> {
        return new Converted(stripSuffix(snake, "_total"), Kind.COUNTER, peer, 1);
      }
      case "timer" -> {
        return new Converted(withSuffix(snake, "_seconds"), Kind.SUMMARY, peer, 1e9);
      }
      case "histogram" -> {
        return new Converted(snake, Kind.SUMMARY, peer, 1);
      }
      default -> {
        Converted renamed = GAUGE_RENAMES.get(snake);
        if (renamed != null) {
          return new Converted(renamed.family(), renamed.kind(), peer, renamed.divisor());
        }
        if (snake.endsWith("_time")) {
          return new Converted(snake + "_seconds", Kind.GAUGE, peer, 1000);
        }
        return new Converted(stripSuffix(snake, "_count"), Kind.GAUGE, peer, 1);
      }
    }
  }

  /**
   * {@code ratis.state_machine.appliedIndex} as {@code ratis_state_machine_applied_index}: camel
   * case split into words, anything but letters and digits as one {@code _}, lower case.
   */
  static String snake(String name) {
    String snake = ACRONYM_WORD.matcher(name).replaceAll("$1_$2");
    snake = LOWER_UPPER.matcher(snake).replaceAll("$1_$2");
    snake = NOT_NAME.matcher(snake).replaceAll("_");
    snake = UNDERSCORES.matcher(snake.toLowerCase(Locale.ROOT)).replaceAll("_");
    if (snake.endsWith("_")) {
      snake = snake.substring(0, snake.length() - 1);
    }
    if (snake.isEmpty() || Character.isDigit(snake.charAt(0))) {
      snake = "_" + snake;
    }
    return snake;
  }

  private static String stripSuffix(String name, String suffix) {
    return name.endsWith(suffix) ? name.substring(0, name.length() - suffix.length()) : name;
  }

  private static String withSuffix(String name, String suffix) {
    return name.endsWith(suffix) ? name : name + suffix;
  }
}
