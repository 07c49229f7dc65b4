package dev.fencekeeper.config;

/**
 * The reference table of every key, in Markdown, as docs/configuration.md carries it between its
 * {@link #BEGIN} and {@link #END} markers. Generated from {@link Keys}, so the docs cannot list a
 * key, default or bound the code does not have.
 */
final class ConfigReference {

  static final String BEGIN =
      "<!-- Generated from Keys; regenerate with ./mvnw -pl cluster-config test"
          + " -Dtest=ConfigReferenceTest -Dfencekeeper.regenerate-docs=true -->";
  static final String END = "<!-- End of the generated table. -->";

  private ConfigReference() {}

  /** The table, one row per key in {@link Keys#ALL} order, each line ending in a newline. */
  static String table() {
    StringBuilder md =
        new StringBuilder()
            .append("| Key | Environment variable | Value | Default | Bounds | Meaning |\n")
            .append("|---|---|---|---|---|---|\n");
    for (ConfigKey<?> key : Keys.ALL) {
      md.append("| `")
          .append(key.name())
          .append("` | ")
          .append(
              ConfigEnvironment.FILE_ONLY.contains(key.name())
                  ? "(file only)"
                  : "`" + key.environmentVariable() + "`")
          .append(" | ")
          .append(cell(key.syntaxName()))
          .append(" | ")
          .append(code(key.defaultDoc()))
          .append(" | ")
          .append(code(key.boundsDoc()))
          .append(" | ")
          .append(cell(key.doc()))
          .append(" |\n");
    }
    return md.toString();
  }

  /** Values as code; what stands in for a missing value, such as "(none)", as words. */
  private static String code(String text) {
    if (text.isEmpty() || text.startsWith("(")) {
      return cell(text);
    }
    return "`" + cell(text) + "`";
  }

  private static String cell(String text) {
    return text.replace("|", "\\|");
  }
}
