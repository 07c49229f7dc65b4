package dev.fencekeeper.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The metric table is consistent, and docs/operations.md documents exactly its metrics. */
class NodeMetricTableTest {
  private static final Path OPERATIONS = Path.of("../docs/operations.md");

  // Guarantee: every metric follows the Prometheus conventions its type calls for, and each name,
  // either way, is declared once.
  @Test
  void namesFollowTheirType() {
    Set<String> prometheus = new HashSet<>();
    Set<String> dropwizard = new HashSet<>();
    for (NodeMetric m : NodeMetric.values()) {
      assertThat(prometheus.add(m.prometheusName())).as("%s declared once", m).isTrue();
      assertThat(dropwizard.add(m.dropwizardPattern())).as("%s declared once", m).isTrue();
      assertThat(m.prometheusName()).matches("fencekeeper_[a-z_]+");
      assertThat(m.help()).isNotBlank();
      switch (m.type()) {
        case COUNTER -> assertThat(m.prometheusName()).endsWith("_total");
        case TIMER -> assertThat(m.prometheusName()).endsWith("_seconds");
        case INFO -> assertThat(m.prometheusName()).endsWith("_info");
        default -> assertThat(m.prometheusName()).doesNotEndWith("_total").doesNotEndWith("_count");
      }
      assertThat(m.buckets().length > 0)
          .as("%s has buckets exactly when it is a histogram", m)
          .isEqualTo(m.type() == NodeMetric.Type.TIMER || m.type() == NodeMetric.Type.HISTOGRAM);
      double[] sorted = m.buckets();
      Arrays.sort(sorted);
      assertThat(m.buckets()).isEqualTo(sorted);
      for (String label : m.labelNames()) {
        assertThat(label).matches("[a-z_]+");
      }
    }
  }

  // Guarantee: operations.md's tables of counters, histograms and gauges name every metric of the
  // table with its Dropwizard (JMX) name, and no metric the table lacks.
  @Test
  void operationsDocumentsExactlyTheTable() throws IOException {
    String doc = Files.readString(OPERATIONS);
    // The rows of the tables headed "Prometheus family" (not the table of renamed names).
    Set<String> documented = new TreeSet<>();
    Pattern row = Pattern.compile("^\\| `(fencekeeper_[a-z_]+)[`{]");
    boolean inTable = false;
    for (String line : doc.split("\n")) {
      if (!line.startsWith("|")) {
        inTable = false;
      } else if (line.startsWith("| Prometheus family |")) {
        inTable = true;
      } else if (inTable) {
        Matcher m = row.matcher(line);
        if (m.find()) {
          documented.add(m.group(1));
        }
      }
    }
    Set<String> declared = new TreeSet<>();
    for (NodeMetric m : NodeMetric.values()) {
      declared.add(m.prometheusName());
      if (m.type() != NodeMetric.Type.INFO) {
        String jmx =
            Pattern.quote(m.dropwizardPattern()).replaceAll("\\{[a-z_]+\\}", "\\\\E[A-Z_<>]+\\\\Q");
        assertThat(Pattern.compile("`" + jmx + "`").matcher(doc).find())
            .as("operations.md gives %s's Dropwizard name %s", m, m.dropwizardPattern())
            .isTrue();
      }
    }
    assertThat(documented).isEqualTo(declared);
  }
}
