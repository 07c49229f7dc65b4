package dev.fencekeeper.tools.bench;

import com.github.mustachejava.DefaultMustacheFactory;
import com.github.mustachejava.Mustache;
import com.github.mustachejava.MustacheFactory;
import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.io.StringReader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The bench report's Mustache templates, kept beside this class as resources, filled with a model
 * of already formatted cells (maps, lists, strings and booleans).
 *
 * <p>Values go into the Markdown as they are: no HTML escaping. Each section of a template ends
 * with a blank line; where a section is left out, or a partial ends in one and the line including
 * it adds another, two blank lines would follow each other, so a run of blank lines becomes one (up
 * to the hand-written summary, which is kept as written).
 */
final class ReportTemplate {
  /** docs/benchmarks.md. */
  static final String DOCUMENT = "benchmarks.md.mustache";

  /** The result tables: the document's "Results" and the bench's default output. */
  static final String TABLES = "bench-tables.md.mustache";

  private static final MustacheFactory FACTORY =
      new DefaultMustacheFactory() {
        @Override
        public void encode(String value, Writer writer) {
          try {
            writer.write(value);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }

        @Override
        public Reader getReader(String resourceName) {
          return new StringReader(resource(resourceName));
        }
      };

  private ReportTemplate() {}

  /** Renders the template {@code name} with {@code model}. */
  static String render(String name, Map<String, Object> model) {
    Mustache mustache = FACTORY.compile(new StringReader(resource(name)), name);
    StringWriter out = new StringWriter();
    mustache.execute(out, model);
    String text = out.toString();
    int kept = text.indexOf(BenchReport.PRESERVED_BEGIN);
    return kept < 0
        ? oneBlankLine(text)
        : oneBlankLine(text.substring(0, kept)) + text.substring(kept);
  }

  private static String oneBlankLine(String text) {
    return text.replaceAll("\n{3,}", "\n\n");
  }

  /** A model map of {@code keyValues}, in order: key, value, key, value... */
  static Map<String, Object> model(Object... keyValues) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < keyValues.length; i += 2) {
      m.put((String) keyValues[i], keyValues[i + 1]);
    }
    return m;
  }

  private static String resource(String name) {
    try (InputStream in = ReportTemplate.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("no template " + name + " beside " + ReportTemplate.class);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
