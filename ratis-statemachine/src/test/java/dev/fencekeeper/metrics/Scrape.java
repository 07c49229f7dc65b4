package dev.fencekeeper.metrics;

import io.prometheus.metrics.expositionformats.generated.com_google_protobuf_4_36_2.Metrics;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalDouble;

/** Fetches a node's HTTP endpoints on 127.0.0.1 and reads Prometheus text exposition. */
final class Scrape {
  private static final HttpClient HTTP =
      HttpClient.newBuilder()
          .connectTimeout(Duration.ofSeconds(2))
          .version(HttpClient.Version.HTTP_1_1)
          .build();

  record Reply(int status, String body) {}

  private Scrape() {}

  static Reply get(int port, String path) {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(5))
            .GET()
            .build();
    try {
      HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
      return new Reply(response.statusCode(), response.body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** The samples of {@code /metrics}, keyed by series ({@code name} or {@code name{labels}}). */
  static Map<String, Double> metrics(int port) {
    Reply reply = get(port, "/metrics");
    if (reply.status() != 200) {
      throw new IllegalStateException("/metrics answered " + reply.status() + ": " + reply.body());
    }
    return parse(reply.body());
  }

  /**
   * Parses the Prometheus text format (0.0.4): one sample per line, {@code series value
   * [timestamp]}; {@code #} lines are HELP and TYPE comments.
   */
  static Map<String, Double> parse(String text) {
    Map<String, Double> samples = new LinkedHashMap<>();
    for (String line : text.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      int end = line.lastIndexOf('}');
      int split = line.indexOf(' ', end < 0 ? 0 : end);
      String series = line.substring(0, split);
      String[] rest = line.substring(split + 1).trim().split(" ");
      samples.put(series, parseValue(rest[0]));
    }
    return samples;
  }

  private static double parseValue(String v) {
    return switch (v) {
      case "+Inf" -> Double.POSITIVE_INFINITY;
      case "-Inf" -> Double.NEGATIVE_INFINITY;
      case "NaN" -> Double.NaN;
      default -> Double.parseDouble(v);
    };
  }

  /**
   * The families of {@code /metrics} in the Prometheus protobuf exposition format, parsed by the
   * generated classes the Prometheus Java client ships for it, keyed by family name.
   */
  static Map<String, Metrics.MetricFamily> families(int port) {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
            .timeout(Duration.ofSeconds(5))
            .header(
                "Accept",
                "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited")
            .GET()
            .build();
    try {
      HttpResponse<byte[]> response = HTTP.send(request, HttpResponse.BodyHandlers.ofByteArray());
      if (response.statusCode() != 200) {
        throw new IllegalStateException("/metrics answered " + response.statusCode());
      }
      Map<String, Metrics.MetricFamily> families = new LinkedHashMap<>();
      java.io.InputStream in = new java.io.ByteArrayInputStream(response.body());
      Metrics.MetricFamily family;
      while ((family = Metrics.MetricFamily.parseDelimitedFrom(in)) != null) {
        if (families.put(family.getName(), family) != null) {
          throw new IllegalStateException("family " + family.getName() + " exposed twice");
        }
      }
      return families;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  static OptionalDouble value(Map<String, Double> samples, String series) {
    Double v = samples.get(series);
    return v == null ? OptionalDouble.empty() : OptionalDouble.of(v);
  }
}
