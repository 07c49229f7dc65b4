package dev.fencekeeper.tools.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencekeeper.config.ConfigException;
import java.awt.Color;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.plot.XYPlot;
import org.jfree.data.xy.XYDataset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CostCurveTest {
  @TempDir Path dir;

  private static StateSize.Figures state(
      int keys, long heapBytes, long snapshotMs, long restartMs) {
    return new StateSize.Figures(
        keys,
        keys / 1000,
        64,
        keys / 40_000.0,
        List.of(
            new StateSize.Node("n1", 17_000_000, heapBytes, heapBytes - 1, snapshotMs, keys * 130L),
            new StateSize.Node("n2", 17_000_000, heapBytes - 2, heapBytes - 3, snapshotMs - 1, 1),
            new StateSize.Node("n3", 17_000_000, heapBytes - 4, heapBytes - 5, snapshotMs - 2, 1)),
        restartMs - 50,
        restartMs);
  }

  private static CostCurve.Figures figures() {
    return new CostCurve.Figures(
        List.of(
            new CostCurve.WorkerPoint(1, 660, 6.1),
            new CostCurve.WorkerPoint(16, 4_250, 10.0),
            new CostCurve.WorkerPoint(64, 14_000, 10.0),
            new CostCurve.WorkerPoint(256, 30_000, 28.0),
            new CostCurve.WorkerPoint(1024, 33_000, 95.0)),
        List.of(
            state(10_000, 21_000_000, 40, 3_100),
            state(1_000_000, 333_000_000, 630, 5_750),
            state(10_000_000, 3_300_000_000L, 6_400, 31_000)));
  }

  // Guarantee: the cost curve is a PNG of 1200 × 900 whose four panels carry every series, each
  // point drawn in its series' colour: throughput and p99 against workers, heap, snapshot and
  // restart against keys.
  @Test
  void drawsEverySeriesIntoAPngOfTheExpectedSize() throws Exception {
    Path png = dir.resolve("benchmarks-cost-curve.png");
    CostCurve.draw(figures(), png);

    byte[] bytes = Files.readAllBytes(png);
    assertThat(bytes).startsWith(0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n');
    BufferedImage image = ImageIO.read(png.toFile());
    assertThat(image.getWidth()).isEqualTo(CostCurve.WIDTH).isEqualTo(1200);
    assertThat(image.getHeight()).isEqualTo(CostCurve.HEIGHT).isEqualTo(900);
    Map<String, Color> colors =
        Map.of(
            CostCurve.THROUGHPUT, CostCurve.THROUGHPUT_COLOR,
            CostCurve.P99, CostCurve.P99_COLOR,
            CostCurve.HEAP, CostCurve.HEAP_COLOR,
            CostCurve.SNAPSHOT, CostCurve.SNAPSHOT_COLOR,
            CostCurve.RESTART, CostCurve.RESTART_COLOR);
    colors.forEach(
        (series, color) ->
            assertThat(pixels(image, color))
                .as("pixels of %s's colour: its points and line are drawn", series)
                .isGreaterThan(300));

    List<JFreeChart> panels = CostCurve.charts(figures());
    assertThat(panels).hasSize(4);
    assertThat(series(panels.get(0))).containsExactly(Map.entry(CostCurve.THROUGHPUT, 5));
    assertThat(series(panels.get(1))).containsExactly(Map.entry(CostCurve.P99, 5));
    assertThat(series(panels.get(2))).containsExactly(Map.entry(CostCurve.HEAP, 3));
    assertThat(series(panels.get(3)))
        .containsExactly(Map.entry(CostCurve.SNAPSHOT, 3), Map.entry(CostCurve.RESTART, 3));
    XYDataset heap = panels.get(2).getXYPlot().getDataset();
    assertThat(heap.getXValue(0, 2)).isEqualTo(10_000_000);
    assertThat(heap.getYValue(0, 2)).isEqualTo(3_300);
  }

  // Guarantee: a figure the bench could not measure (-1) is left out of its series, not drawn as
  // a point below zero.
  @Test
  void unknownFiguresAreLeftOut() {
    CostCurve.Figures f =
        new CostCurve.Figures(
            List.of(new CostCurve.WorkerPoint(1, 600, Double.NaN)),
            List.of(state(10_000, 21_000_000, 40, 3_100), state(20_000, -1, -1, -1)));
    List<JFreeChart> panels = CostCurve.charts(f);
    assertThat(series(panels.get(1))).containsExactly(Map.entry(CostCurve.P99, 0));
    assertThat(series(panels.get(2))).containsExactly(Map.entry(CostCurve.HEAP, 1));
  }

  // Guarantee: the chart goes beside the document, named after it; bad counts are refused with
  // the option's name.
  @Test
  void chartPathAndCountsAreChecked() {
    assertThat(CostCurve.chartFor(Path.of("docs/benchmarks.md")))
        .isEqualTo(Path.of("docs/benchmarks-cost-curve.png"));
    assertThat(CostCurve.parseCounts("--cost-curve-workers", "1, 16,64", 1, 4096))
        .containsExactly(1, 16, 64);
    for (String bad : List.of("", "16,1", "1,1", "0", "5000", "x")) {
      assertThatThrownBy(() -> CostCurve.parseCounts("--cost-curve-workers", bad, 1, 4096))
          .isInstanceOf(ConfigException.class)
          .hasMessageContaining("--cost-curve-workers")
          .hasMessageContaining("ascending");
    }
  }

  private static long pixels(BufferedImage image, Color color) {
    long n = 0;
    int rgb = color.getRGB();
    for (int y = 0; y < image.getHeight(); y++) {
      for (int x = 0; x < image.getWidth(); x++) {
        if (image.getRGB(x, y) == rgb) {
          n++;
        }
      }
    }
    return n;
  }

  /** Series name → number of points, in order. */
  private static List<Map.Entry<String, Integer>> series(JFreeChart chart) {
    XYPlot plot = chart.getXYPlot();
    XYDataset data = plot.getDataset();
    List<Map.Entry<String, Integer>> out = new java.util.ArrayList<>();
    for (int i = 0; i < data.getSeriesCount(); i++) {
      out.add(Map.entry(data.getSeriesKey(i).toString(), data.getItemCount(i)));
    }
    return out;
  }
}
