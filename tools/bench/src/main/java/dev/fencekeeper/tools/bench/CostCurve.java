package dev.fencekeeper.tools.bench;

import dev.fencekeeper.config.ConfigException;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Rectangle2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.function.ToDoubleFunction;
import javax.imageio.ImageIO;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * {@code --cost-curve}: how fencekeeper's cost grows with the work. W2 at a rising number of
 * workers (throughput and p99 against workers) and a rising state (heap, snapshot and restart time
 * against keys), drawn by JFreeChart as one PNG of four panels next to the benchmarks document.
 */
final class CostCurve {
  static final String DEFAULT_WORKERS = "1,16,64,256,1024";
  static final String DEFAULT_KEYS = "10000,1000000,10000000";

  /** The image's size in pixels: four panels, two by two. */
  static final int WIDTH = 1200;

  static final int HEIGHT = 900;

  /** Series names, as the panels' legends show them. */
  static final String THROUGHPUT = "W2 writes/s";

  static final String P99 = "W2 p99 ms";
  static final String HEAP = "heap per node MB (largest, after full GC)";
  static final String SNAPSHOT = "snapshot s (slowest node)";
  static final String RESTART = "restart of every node to serving s";

  /**
   * One colour per series, each distinct, so that a reader (and the chart's test) tells them apart.
   */
  static final Color THROUGHPUT_COLOR = new Color(0x1f, 0x77, 0xb4);

  static final Color P99_COLOR = new Color(0xd6, 0x27, 0x28);
  static final Color HEAP_COLOR = new Color(0x2c, 0xa0, 0x2c);
  static final Color SNAPSHOT_COLOR = new Color(0x94, 0x67, 0xbd);
  static final Color RESTART_COLOR = new Color(0xff, 0x7f, 0x0e);

  private CostCurve() {}

  /** W2 at one worker count. */
  record WorkerPoint(int workers, double opsPerSecond, double p99Ms) {}

  /** What a cost-curve run measured; either list may be empty. */
  record Figures(List<WorkerPoint> workers, List<StateSize.Figures> states) {}

  /**
   * The comma-separated counts of {@code option}, each in {@code min..max}, ascending and distinct.
   */
  static List<Integer> parseCounts(String option, String value, int min, int max) {
    try {
      List<Integer> list =
          Arrays.stream(value.split(",", -1)).map(String::trim).map(Integer::parseInt).toList();
      for (int i = 0; i < list.size(); i++) {
        if (list.get(i) < min || list.get(i) > max || (i > 0 && list.get(i) <= list.get(i - 1))) {
          throw new NumberFormatException();
        }
      }
      return list;
    } catch (NumberFormatException e) {
      throw new ConfigException(
          option
              + ": '"
              + value
              + "' must be ascending numbers "
              + String.format(java.util.Locale.ROOT, "%,d..%,d", min, max)
              + " separated by commas");
    }
  }

  /** Where the chart of the document {@code document} goes: beside it, named after it. */
  static Path chartFor(Path document) {
    String name = document.getFileName().toString();
    String stem = name.endsWith(".md") ? name.substring(0, name.length() - 3) : name;
    return document.resolveSibling(stem + "-cost-curve.png");
  }

  /** The four panels: throughput and p99 against workers, heap and times against keys. */
  static List<JFreeChart> charts(Figures figures) {
    return List.of(
        panel(
            "W2 throughput against workers",
            "workers",
            "writes/s",
            series(THROUGHPUT, figures.workers(), WorkerPoint::workers, WorkerPoint::opsPerSecond),
            List.of(THROUGHPUT_COLOR)),
        panel(
            "W2 p99 latency against workers",
            "workers",
            "ms",
            series(P99, figures.workers(), WorkerPoint::workers, WorkerPoint::p99Ms),
            List.of(P99_COLOR)),
        panel(
            "Heap per node against keys of 100 bytes",
            "keys",
            "MB",
            series(HEAP, figures.states(), StateSize.Figures::keys, f -> mb(f.maxHeapBytes())),
            List.of(HEAP_COLOR)),
        panel(
            "Snapshot and restart against keys of 100 bytes",
            "keys",
            "s",
            series(
                SNAPSHOT,
                figures.states(),
                StateSize.Figures::keys,
                f -> seconds(f.maxSnapshotMs()),
                RESTART,
                f -> seconds(f.restartServingMs())),
            List.of(SNAPSHOT_COLOR, RESTART_COLOR)));
  }

  /** Draws the four panels, two by two, into a PNG of {@link #WIDTH} × {@link #HEIGHT}. */
  static void draw(Figures figures, Path png) throws IOException {
    // No display on a bench machine: AWT must not look for one.
    System.setProperty("java.awt.headless", "true");
    BufferedImage image = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = image.createGraphics();
    try {
      g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
      g.setColor(Color.WHITE);
      g.fillRect(0, 0, WIDTH, HEIGHT);
      List<JFreeChart> panels = charts(figures);
      int w = WIDTH / 2;
      int h = HEIGHT / 2;
      for (int i = 0; i < panels.size(); i++) {
        panels.get(i).draw(g, new Rectangle2D.Double((i % 2) * w, (i / 2) * h, w, h));
      }
    } finally {
      g.dispose();
    }
    if (png.getParent() != null) {
      Files.createDirectories(png.getParent());
    }
    if (!ImageIO.write(image, "png", png.toFile())) {
      throw new IOException("no PNG writer in this JVM");
    }
  }

  private static <T> XYSeriesCollection series(
      String name, List<T> points, ToDoubleFunction<T> x, ToDoubleFunction<T> y) {
    XYSeriesCollection data = new XYSeriesCollection();
    data.addSeries(xy(name, points, x, y));
    return data;
  }

  private static <T> XYSeriesCollection series(
      String name,
      List<T> points,
      ToDoubleFunction<T> x,
      ToDoubleFunction<T> y,
      String otherName,
      ToDoubleFunction<T> otherY) {
    XYSeriesCollection data = series(name, points, x, y);
    data.addSeries(xy(otherName, points, x, otherY));
    return data;
  }

  /** A series of the points with a known figure (a negative one is unknown: not drawn). */
  private static <T> XYSeries xy(
      String name, List<T> points, ToDoubleFunction<T> x, ToDoubleFunction<T> y) {
    XYSeries s = new XYSeries(name);
    for (T p : points) {
      double v = y.applyAsDouble(p);
      if (v >= 0 && !Double.isNaN(v)) {
        s.add(x.applyAsDouble(p), v);
      }
    }
    return s;
  }

  private static JFreeChart panel(
      String title, String xLabel, String yLabel, XYSeriesCollection data, List<Color> colors) {
    LogAxis x = new LogAxis(xLabel);
    x.setBase(10);
    x.setSmallestValue(1);
    // Log-space unit: a tick at each power of ten (1, 10, 100, …), the counts a reader expects.
    x.setTickUnit(new org.jfree.chart.axis.NumberTickUnit(1));
    x.setMinorTickMarksVisible(false);
    x.setNumberFormatOverride(new java.text.DecimalFormat("#,##0"));
    NumberAxis y = new NumberAxis(yLabel);
    y.setAutoRangeIncludesZero(true);
    XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
    for (int i = 0; i < colors.size(); i++) {
      renderer.setSeriesPaint(i, colors.get(i));
      renderer.setSeriesStroke(i, new BasicStroke(2.5f));
      renderer.setSeriesShape(i, new java.awt.geom.Rectangle2D.Double(-5, -5, 10, 10));
    }
    XYPlot plot = new XYPlot(data, x, y, renderer);
    plot.setBackgroundPaint(Color.WHITE);
    plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
    plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
    JFreeChart chart = new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, plot, true);
    chart.setBackgroundPaint(Color.WHITE);
    return chart;
  }

  private static double mb(long bytes) {
    return bytes < 0 ? -1 : bytes / 1e6;
  }

  private static double seconds(long ms) {
    return ms < 0 ? -1 : ms / 1000.0;
  }
}
