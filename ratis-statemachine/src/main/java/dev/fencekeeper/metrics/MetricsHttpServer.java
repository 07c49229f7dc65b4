package dev.fencekeeper.metrics;

import com.sun.net.httpserver.HttpExchange;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * One node's HTTP endpoint: {@code /metrics} is the node's {@link PrometheusRegistry} in the
 * Prometheus text format (OpenMetrics or protobuf when the scraper asks for them), served by the
 * Prometheus Java client's HTTP server; {@code /health} is the readiness check ({@link
 * NodeMetrics#health()}); {@code /-/healthy} is the exporter's liveness check (200 while the
 * process serves HTTP).
 *
 * <p>Slow clients: the JDK server behind it reads a request on a worker thread, so a connection
 * that sends half a request holds a worker until it sends the rest. Two bounds keep a few such
 * sockets from silencing {@code /health}: {@value #WORKERS} workers (the client library's default
 * of ten, with a queue behind them, let ten stalled sockets block every later probe), and the JDK
 * server's own request and response time limits ({@link #REQUEST_TIME_LIMIT_PROPERTY}, {@link
 * #RESPONSE_TIME_LIMIT_PROPERTY}), which close a connection that has not finished its request in
 * {@value #REQUEST_TIME_LIMIT_SECONDS} s. Those limits are JVM-wide settings read when the JVM's
 * first HTTP server starts. The client library sets 60 s for both when they are unset; this class
 * is initialised first and sets its own, and an operator's {@code -D} value wins over both.
 */
final class MetricsHttpServer implements AutoCloseable {
  static final String REQUEST_TIME_LIMIT_PROPERTY = "sun.net.httpserver.maxReqTime";
  static final String RESPONSE_TIME_LIMIT_PROPERTY = "sun.net.httpserver.maxRspTime";
  static final int REQUEST_TIME_LIMIT_SECONDS = 5;
  static final int RESPONSE_TIME_LIMIT_SECONDS = 30;
  static final int WORKERS = 32;

  static {
    if (System.getProperty(REQUEST_TIME_LIMIT_PROPERTY) == null) {
      System.setProperty(REQUEST_TIME_LIMIT_PROPERTY, Integer.toString(REQUEST_TIME_LIMIT_SECONDS));
    }
    if (System.getProperty(RESPONSE_TIME_LIMIT_PROPERTY) == null) {
      System.setProperty(
          RESPONSE_TIME_LIMIT_PROPERTY, Integer.toString(RESPONSE_TIME_LIMIT_SECONDS));
    }
  }

  private final HTTPServer server;
  private final ExecutorService workers;

  private MetricsHttpServer(HTTPServer server, ExecutorService workers) {
    this.server = server;
    this.workers = workers;
  }

  static MetricsHttpServer start(
      String host, int port, PrometheusRegistry registry, Supplier<NodeMetrics.Health> health)
      throws IOException {
    ExecutorService workers = workers(host + ":" + port);
    try {
      HTTPServer server =
          HTTPServer.builder()
              .hostname(host)
              .port(port)
              .registry(registry)
              .executorService(workers)
              .defaultHandler(exchange -> route(exchange, health))
              .buildAndStart();
      return new MetricsHttpServer(server, workers);
    } catch (IOException | RuntimeException e) {
      workers.shutdownNow();
      throw e;
    }
  }

  /**
   * Threads are made as connections need them, up to {@link #WORKERS}; past that the server's
   * accept thread waits for a free worker (the time limits free stalled ones) rather than refusing
   * or queueing behind them.
   */
  private static ExecutorService workers(String endpoint) {
    AtomicInteger n = new AtomicInteger();
    return new ThreadPoolExecutor(
        1,
        WORKERS,
        60,
        TimeUnit.SECONDS,
        new SynchronousQueue<>(),
        r -> {
          Thread t =
              new Thread(r, "fencekeeper-metrics-http-" + endpoint + "-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        },
        (task, pool) -> {
          try {
            while (!pool.isShutdown()) {
              if (pool.getQueue().offer(task, 100, TimeUnit.MILLISECONDS)) {
                return;
              }
            }
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          throw new RejectedExecutionException("metrics endpoint " + endpoint + " is closing");
        });
  }

  int port() {
    return server.getPort();
  }

  /**
   * Everything the exporter does not serve itself ({@code /metrics}, {@code /-/healthy}) comes
   * here.
   */
  private static void route(HttpExchange exchange, Supplier<NodeMetrics.Health> health)
      throws IOException {
    String path = exchange.getRequestURI().getPath();
    switch (path) {
      case "/health", "/health/" -> {
        NodeMetrics.Health h = health.get();
        respond(exchange, h.ready() ? 200 : 503, h.message());
      }
      case "/" ->
          respond(
              exchange, 200, "fencekeeper node: /metrics (Prometheus text), /health (readiness)");
      default -> respond(exchange, 404, "not found: " + path);
    }
  }

  private static void respond(HttpExchange exchange, int status, String line) throws IOException {
    try (exchange) {
      byte[] body = (line + "\n").getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
      exchange.getResponseHeaders().set("Cache-Control", "no-store");
      if ("HEAD".equals(exchange.getRequestMethod())) {
        exchange.sendResponseHeaders(status, -1);
        return;
      }
      exchange.sendResponseHeaders(status, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }

  @Override
  public void close() {
    try {
      server.close();
    } finally {
      workers.shutdownNow();
    }
  }
}
