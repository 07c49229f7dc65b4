package dev.fencekeeper.config;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * docs/configuration.md carries the table {@link ConfigReference} generates from the keys. When a
 * key, default, bound or description changes, regenerate it with {@code ./mvnw -pl cluster-config
 * test -Dtest=ConfigReferenceTest -Dfencekeeper.regenerate-docs=true} and commit the file.
 */
class ConfigReferenceTest {

  private static final String REGENERATE = "fencekeeper.regenerate-docs";

  // Guarantee: the docs' key table is exactly the one generated from Keys, so a key added, renamed
  // or given another default without regenerating the docs fails the build.
  @Test
  void docsCarryTheGeneratedTable() throws Exception {
    Path docs = docsFile();
    String text = Files.readString(docs, UTF_8);
    int begin = text.indexOf(ConfigReference.BEGIN);
    int end = text.indexOf(ConfigReference.END);
    assertThat(begin).as("%s has the marker %s", docs, ConfigReference.BEGIN).isNotNegative();
    assertThat(end).as("%s has the marker %s", docs, ConfigReference.END).isGreaterThan(begin);
    String current = text.substring(begin + ConfigReference.BEGIN.length() + 1, end);
    String generated = ConfigReference.table();
    if (Boolean.getBoolean(REGENERATE)) {
      Files.writeString(
          docs,
          text.substring(0, begin + ConfigReference.BEGIN.length() + 1)
              + generated
              + text.substring(end),
          UTF_8);
      return;
    }
    assertThat(current)
        .as(
            "%s is out of date; regenerate it: ./mvnw -pl cluster-config test"
                + " -Dtest=ConfigReferenceTest -D%s=true",
            docs, REGENERATE)
        .isEqualTo(generated);
  }

  // Every key the reader accepts has a row, so none is undocumented.
  @Test
  void everyKeyHasARow() {
    String table = ConfigReference.table();
    for (String name : Keys.NAMES) {
      assertThat(table).contains("| `" + name + "` |");
    }
    assertThat(table.lines().count()).isEqualTo(Keys.NAMES.size() + 2L);
  }

  /** docs/configuration.md of the repository, found from the module's directory upwards. */
  private static Path docsFile() {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      Path candidate = dir.resolve("docs/configuration.md");
      if (Files.isRegularFile(candidate)) {
        return candidate;
      }
    }
    throw new AssertionError("no docs/configuration.md above " + Path.of("").toAbsolutePath());
  }
}
