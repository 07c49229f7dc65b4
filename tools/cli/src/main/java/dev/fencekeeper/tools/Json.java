package dev.fencekeeper.tools;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintStream;
import java.io.UncheckedIOException;

/**
 * The tool's one JSON writer: compact, one object per line, so {@code jq} and line readers both
 * work.
 */
public final class Json {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private Json() {}

  public static ObjectNode object() {
    return MAPPER.createObjectNode();
  }

  public static String write(Object value) {
    try {
      return MAPPER.writeValueAsString(value);
    } catch (JsonProcessingException e) {
      // Only trees and strings are written here; failing to serialise one is a bug, not an input
      // error.
      throw new UncheckedIOException(e);
    }
  }

  public static void print(PrintStream out, JsonNode node) {
    out.println(write(node));
    out.flush();
  }
}
