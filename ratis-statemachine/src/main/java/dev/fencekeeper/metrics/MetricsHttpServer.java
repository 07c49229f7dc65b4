package dev.fencekeeper.metrics;

import com.codahale.metrics.MetricRegistry;
import com.sun.net.httpserver.HttpExchange;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.instrumentation.dropwizard.DropwizardExports;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node's HTTP endpoint: {@code /metrics} is the node's Dropwizard registry in Prometheus text format,
 * rendered by the Prometheus project's own Dropwizard bridge and HTTP server (client_java 1.4.3); {@code
 * /health} is the readiness check ({@link NodeMetrics#health()}); {@code /-/healthy} is the exporter's
 * liveness check (200 while the process serves HTTP).
 */
final class MetricsHttpServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MetricsHttpServer.class);

  private final HTTPServer server;

  private MetricsHttpServer(HTTPServer server) {
    this.server = server;
  }

  static MetricsHttpServer start(String host, int port, MetricRegistry registry, Supplier<NodeMetrics.Health> health)
      throws IOException {
    // A registry of our own, not the JVM-wide default: several nodes may share a JVM.
    PrometheusRegistry prometheus = new PrometheusRegistry();
    DropwizardExports.builder()
        .dropwizardRegistry(registry)
        // One unreadable metric must not fail the whole scrape.
        .invalidMetricHandler((name, e) -> {
          LOG.debug("Metric {} not exported: {}", name, e.toString());
          return true;
        })
        .register(prometheus);
    HTTPServer server =
        HTTPServer.builder()
            .hostname(host)
            .port(port)
            .registry(prometheus)
            .defaultHandler(exchange -> route(exchange, health))
            .buildAndStart();
    return new MetricsHttpServer(server);
  }

  int port() {
    return server.getPort();
  }

  /** Everything the exporter does not serve itself ({@code /metrics}, {@code /-/healthy}) comes here. */
  private static void route(HttpExchange exchange, Supplier<NodeMetrics.Health> health) throws IOException {
    String path = exchange.getRequestURI().getPath();
    switch (path) {
      case "/health", "/health/" -> {
        NodeMetrics.Health h = health.get();
        respond(exchange, h.ready() ? 200 : 503, h.message());
      }
      case "/" -> respond(exchange, 200, "fencekeeper node: /metrics (Prometheus text), /health (readiness)");
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
    server.close();
  }
}
