package dev.fencekeeper.metrics;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What {@code promtool check metrics} checks, for machines without it: the Prometheus text format
 * (0.0.4) parsed strictly (each family declared once, its samples together under it, valid names,
 * labels and values, histogram buckets with {@code le} ending in {@code +Inf}, summary quantiles),
 * then the lint rules of Prometheus's {@code promlint}: help text, {@code _total} on counters and
 * only on them, {@code _count}, {@code _sum}, {@code _bucket} and {@code le}/{@code quantile} only
 * where they belong, snake case, no {@code :}, no abbreviated or non-base units, no type in the
 * name. {@link #promtool} runs the real one where it is installed.
 */
final class PromLint {
  private static final Pattern NAME = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
  private static final Pattern LABEL =
      Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");
  private static final Set<String> TYPES =
      Set.of("counter", "gauge", "histogram", "summary", "untyped");
  private static final Set<String> BASE_UNITS =
      Set.of(
          "amperes", "bytes", "celsius", "grams", "joules", "kelvin", "meters", "metres", "seconds",
          "volts");
  private static final Map<String, String> NON_BASE_UNITS =
      Map.ofEntries(
          Map.entry("minutes", "seconds"),
          Map.entry("hours", "seconds"),
          Map.entry("days", "seconds"),
          Map.entry("weeks", "seconds"),
          Map.entry("kelvins", "kelvin"),
          Map.entry("fahrenheit", "celsius"),
          Map.entry("rankine", "celsius"),
          Map.entry("inches", "meters"),
          Map.entry("yards", "meters"),
          Map.entry("miles", "meters"),
          Map.entry("bits", "bytes"),
          Map.entry("calories", "joules"),
          Map.entry("pounds", "grams"),
          Map.entry("ounces", "grams"));
  private static final List<String> UNIT_PREFIXES =
      List.of(
          "", "pico", "nano", "micro", "milli", "centi", "deci", "deca", "hecto", "kilo", "kibi",
          "mega", "mibi", "giga", "gibi", "tera", "tebi", "peta", "pebi");
  private static final Set<String> UNIT_ABBREVIATIONS =
      Set.of("s", "ms", "us", "ns", "sec", "b", "kb", "mb", "gb", "tb", "pb", "m", "h", "d");

  private record Sample(String name, Map<String, String> labels, double value) {}

  private static final class Family {
    final String name;
    String type = "untyped";
    String help;
    final List<Sample> samples = new ArrayList<>();

    Family(String name) {
      this.name = name;
    }
  }

  private PromLint() {}

  /** Every problem found in {@code text}, one line each; empty when it passes. */
  static List<String> check(String text) {
    List<String> problems = new ArrayList<>();
    Map<String, Family> families = new LinkedHashMap<>();
    Family current = null;
    Set<String> series = new HashSet<>();
    int lineNo = 0;
    for (String line : text.split("\n", -1)) {
      lineNo++;
      if (line.isBlank()) {
        continue;
      }
      if (line.startsWith("#")) {
        String[] parts = line.split(" ", 4);
        if (parts.length >= 3 && (parts[1].equals("HELP") || parts[1].equals("TYPE"))) {
          String name = parts[2];
          Family f = families.get(name);
          if (f == null) {
            f = new Family(name);
            families.put(name, f);
          } else if (f != current) {
            problems.add(lineNo + ": " + name + " is declared a second time, apart from its first");
          }
          current = f;
          if (parts[1].equals("TYPE")) {
            String type = parts.length > 3 ? parts[3].trim() : "";
            if (!TYPES.contains(type)) {
              problems.add(lineNo + ": " + name + " has unknown type '" + type + "'");
            }
            if (!f.samples.isEmpty()) {
              problems.add(lineNo + ": " + name + " has its TYPE after its samples");
            }
            f.type = type;
          } else {
            if (f.help != null) {
              problems.add(lineNo + ": second HELP line for " + name);
            }
            f.help = parts.length > 3 ? parts[3] : "";
          }
        }
        continue;
      }
      Optional<Sample> parsed = sample(line);
      if (parsed.isEmpty()) {
        problems.add(lineNo + ": not a sample: " + line);
        continue;
      }
      Sample s = parsed.get();
      if (!series.add(s.name() + s.labels())) {
        problems.add(lineNo + ": series " + s.name() + s.labels() + " appears twice");
      }
      Family owner = current != null && belongs(current, s.name()) ? current : null;
      if (owner == null) {
        owner = families.computeIfAbsent(s.name(), Family::new);
        if (!owner.samples.isEmpty() && owner != current) {
          problems.add(lineNo + ": samples of " + s.name() + " are not together");
        }
        current = owner;
      }
      owner.samples.add(s);
    }
    for (Family f : families.values()) {
      structure(f, problems);
      lint(f, problems);
    }
    return problems;
  }

  private static boolean belongs(Family f, String sampleName) {
    if (sampleName.equals(f.name)) {
      return true;
    }
    return switch (f.type) {
      case "histogram" ->
          sampleName.equals(f.name + "_bucket")
              || sampleName.equals(f.name + "_sum")
              || sampleName.equals(f.name + "_count");
      case "summary" -> sampleName.equals(f.name + "_sum") || sampleName.equals(f.name + "_count");
      default -> false;
    };
  }

  private static Optional<Sample> sample(String line) {
    Matcher name = NAME.matcher(line);
    if (!name.lookingAt()) {
      return Optional.empty();
    }
    int at = name.end();
    Map<String, String> labels = new TreeMap<>();
    if (at < line.length() && line.charAt(at) == '{') {
      int close = line.indexOf('}', at);
      if (close < 0) {
        return Optional.empty();
      }
      String inside = line.substring(at + 1, close);
      Matcher l = LABEL.matcher(inside);
      int pos = 0;
      while (pos < inside.length()) {
        if (!l.find(pos) || l.start() != pos) {
          return Optional.empty();
        }
        if (labels.put(l.group(1), l.group(2)) != null) {
          return Optional.empty();
        }
        pos = l.end();
        if (pos < inside.length()) {
          if (inside.charAt(pos) != ',') {
            return Optional.empty();
          }
          pos++;
        }
      }
      at = close + 1;
    }
    String[] rest = line.substring(at).trim().split(" ");
    if (rest.length < 1 || rest.length > 2 || !line.substring(at).startsWith(" ")) {
      return Optional.empty();
    }
    try {
      double v =
          switch (rest[0]) {
            case "+Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            case "NaN" -> Double.NaN;
            default -> Double.parseDouble(rest[0]);
          };
      if (rest.length == 2) {
        Long.parseLong(rest[1]);
      }
      return Optional.of(new Sample(name.group(), labels, v));
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }

  /** What the text parser itself refuses. */
  private static void structure(Family f, List<String> problems) {
    if (f.type.equals("histogram")) {
      Map<Map<String, String>, List<Sample>> buckets = new LinkedHashMap<>();
      Map<Map<String, String>, Double> counts = new LinkedHashMap<>();
      for (Sample s : f.samples) {
        if (s.name().equals(f.name + "_bucket")) {
          if (!s.labels().containsKey("le")) {
            problems.add(f.name + ": a bucket without le");
            continue;
          }
          Map<String, String> key = new TreeMap<>(s.labels());
          key.remove("le");
          buckets.computeIfAbsent(key, k -> new ArrayList<>()).add(s);
        } else if (s.name().equals(f.name + "_count")) {
          counts.put(s.labels(), s.value());
        }
      }
      buckets.forEach(
          (key, list) -> {
            double previous = -1;
            for (Sample b : list) {
              if (b.value() < previous) {
                problems.add(f.name + key + ": buckets are not cumulative");
              }
              previous = b.value();
            }
            Sample last = list.get(list.size() - 1);
            if (!last.labels().get("le").equals("+Inf")) {
              problems.add(f.name + key + ": the last bucket is not +Inf");
            } else if (counts.containsKey(key) && counts.get(key) != last.value()) {
              problems.add(f.name + key + ": the +Inf bucket is not the count");
            }
          });
    }
    if (f.type.equals("summary")) {
      for (Sample s : f.samples) {
        if (s.name().equals(f.name) && !s.labels().containsKey("quantile")) {
          problems.add(f.name + ": a summary sample without quantile");
        }
      }
    }
  }

  /** promlint's rules. */
  private static void lint(Family f, List<String> problems) {
    String n = f.name;
    String problem = f.name + " ";
    if (f.help == null || f.help.isBlank()) {
      problems.add(problem + "no help text");
    }
    if (n.contains(":")) {
      problems.add(problem + "metric names should not contain ':'");
    }
    if (!n.equals(n.toLowerCase(Locale.ROOT))) {
      problems.add(problem + "metric names should be written in 'snake_case' not 'camelCase'");
    }
    boolean histogram = f.type.equals("histogram");
    boolean summary = f.type.equals("summary");
    if (f.type.equals("counter") && !n.endsWith("_total")) {
      problems.add(problem + "counter metrics should have \"_total\" suffix");
    }
    if (!f.type.equals("counter") && !f.type.equals("untyped") && n.endsWith("_total")) {
      problems.add(problem + "non-counter metrics should not have \"_total\" suffix");
    }
    if (!histogram && n.endsWith("_bucket")) {
      problems.add(problem + "non-histogram metrics should not have \"_bucket\" suffix");
    }
    if (!histogram && !summary && (n.endsWith("_count") || n.endsWith("_sum"))) {
      problems.add(
          problem
              + "non-histogram and non-summary metrics should not have a _count or _sum suffix");
    }
    for (Sample s : f.samples) {
      for (String label : s.labels().keySet()) {
        if (!histogram && label.equals("le")) {
          problems.add(problem + "non-histogram metrics should not have \"le\" label");
        }
        if (!summary && label.equals("quantile")) {
          problems.add(problem + "non-summary metrics should not have \"quantile\" label");
        }
        if (!label.equals(label.toLowerCase(Locale.ROOT))) {
          problems.add(problem + "label names should be written in 'snake_case' not 'camelCase'");
        }
      }
    }
    if (!f.type.equals("untyped") && (n.contains("_" + f.type + "_") || n.endsWith("_" + f.type))) {
      problems.add(problem + "metric name should not include type '" + f.type + "'");
    }
    for (String part : n.split("_")) {
      if (UNIT_ABBREVIATIONS.contains(part)) {
        problems.add(problem + "metric names should not contain abbreviated units");
      }
      for (String prefix : UNIT_PREFIXES) {
        for (String base : BASE_UNITS) {
          if (part.equals(prefix + base) && !prefix.isEmpty()) {
            problems.add(problem + "use base unit \"" + base + "\" instead of \"" + part + "\"");
          }
        }
        for (Map.Entry<String, String> unit : NON_BASE_UNITS.entrySet()) {
          if (part.equals(prefix + unit.getKey())) {
            problems.add(
                problem + "use base unit \"" + unit.getValue() + "\" instead of \"" + part + "\"");
          }
        }
      }
    }
  }

  /** {@code promtool} on the PATH, if there is one. */
  static Optional<Path> promtool() {
    String path = System.getenv("PATH");
    if (path == null) {
      return Optional.empty();
    }
    for (String dir : path.split(java.io.File.pathSeparator)) {
      Path candidate = Path.of(dir, "promtool");
      if (Files.isExecutable(candidate)) {
        return Optional.of(candidate);
      }
    }
    return Optional.empty();
  }

  /** Runs {@code promtool check metrics} on {@code text}: its exit code and what it printed. */
  static Map.Entry<Integer, String> promtool(Path promtool, String text, Path scratch)
      throws IOException, InterruptedException {
    Path input = scratch.resolve("metrics.txt");
    Path output = scratch.resolve("promtool.out");
    Files.writeString(input, text, StandardCharsets.UTF_8);
    Process p =
        new ProcessBuilder(promtool.toString(), "check", "metrics")
            .redirectInput(input.toFile())
            .redirectErrorStream(true)
            .redirectOutput(output.toFile())
            .start();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("promtool did not finish within 60 s");
    }
    return Map.entry(p.exitValue(), Files.readString(output));
  }
}
