package dev.fencekeeper.config;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * One key of a cluster's properties file, defined once in {@link Keys}: its name, the syntax of its
 * value, its default, the bounds every value must keep, and one line of documentation. Reading
 * ({@link #parse}), writing ({@link #format}), checking values built in code ({@link #check}) and
 * the reference table in docs/configuration.md all derive from it.
 *
 * @param <T> the value's type
 */
final class ConfigKey<T> {

  /**
   * The syntax of a value: how text becomes a value ({@code parse} takes the key's name for its
   * messages) and back; {@code name} describes it in the reference table.
   */
  record Syntax<T>(String name, BiFunction<String, String, T> parse, Function<T, String> format) {}

  /**
   * A bound a value must keep: {@code problem} returns null for a value that keeps it, else the
   * words that complete "key: 'value' ..."; {@code doc} names the bound in the reference table.
   */
  record Bound<T>(Function<T, String> problem, String doc) {
    static <T> Bound<T> of(Predicate<T> holds, String problem, String doc) {
      return new Bound<>(value -> holds.test(value) ? null : problem, doc);
    }
  }

  private final String name;
  private final Syntax<T> syntax;
  private final T defaultValue;
  private final String defaultDoc;
  private final List<Bound<T>> bounds;
  private final String doc;

  /**
   * @param defaultValue the value when the key is left out; null: the key is optional (or, for
   *     {@code peers}, required) and has no value then
   * @param defaultDoc the reference table's default column; null: {@code defaultValue} formatted
   */
  ConfigKey(
      String name,
      Syntax<T> syntax,
      T defaultValue,
      String defaultDoc,
      List<Bound<T>> bounds,
      String doc) {
    this.name = Objects.requireNonNull(name, "name");
    this.syntax = Objects.requireNonNull(syntax, "syntax");
    this.defaultValue = defaultValue;
    this.bounds = List.copyOf(bounds);
    this.doc = Objects.requireNonNull(doc, "doc");
    this.defaultDoc = defaultDoc != null ? defaultDoc : format(defaultValue);
    if (defaultValue != null) {
      check(defaultValue);
    }
  }

  String name() {
    return name;
  }

  /** The default, or null when the key has none. */
  T defaultValue() {
    return defaultValue;
  }

  String doc() {
    return doc;
  }

  String syntaxName() {
    return syntax.name();
  }

  String defaultDoc() {
    return defaultDoc;
  }

  /** The bounds, as the reference table shows them; empty when only the syntax restricts. */
  String boundsDoc() {
    return String.join(", ", bounds.stream().map(Bound::doc).toList());
  }

  /** The environment variable that sets this key ({@link ClusterConfig#environmentVariable}). */
  String environmentVariable() {
    return ClusterConfig.environmentVariable(name);
  }

  /**
   * The value {@code text} (already trimmed, not empty) stands for.
   *
   * @throws ConfigException naming this key and {@code text} if it has the wrong syntax or breaks a
   *     bound
   */
  T parse(String text) {
    T value = syntax.parse().apply(name, text);
    String problem = problem(value);
    if (problem != null) {
      throw new ConfigException(name + ": '" + text + "' " + problem);
    }
    return value;
  }

  /** {@code value} as {@link #parse} reads it back; "" for none. */
  String format(T value) {
    return value == null ? "" : syntax.format().apply(value);
  }

  /**
   * {@code value}, if it keeps every bound.
   *
   * @throws ConfigException naming this key and the value otherwise, or if it is null
   */
  T check(T value) {
    if (value == null) {
      throw new ConfigException(name + ": missing");
    }
    String problem = problem(value);
    if (problem != null) {
      throw new ConfigException(name + ": '" + describe(value) + "' " + problem);
    }
    return value;
  }

  /** This key's value in {@code values} (keyed by {@link ConfigKey}), null if it has none. */
  @SuppressWarnings("unchecked")
  T valueIn(Map<ConfigKey<?>, Object> values) {
    return (T) values.get(this);
  }

  /** As {@link #check}, for a value of unchecked type from a key-value map. */
  @SuppressWarnings("unchecked")
  T checkObject(Object value) {
    return check((T) value);
  }

  private String problem(T value) {
    for (Bound<T> bound : bounds) {
      String problem = bound.problem().apply(value);
      if (problem != null) {
        return problem;
      }
    }
    return null;
  }

  /** For messages about values built in code, which may not be formattable. */
  private String describe(T value) {
    try {
      return format(value);
    } catch (IllegalArgumentException e) {
      return value.toString();
    }
  }

  @Override
  public String toString() {
    return name;
  }
}
