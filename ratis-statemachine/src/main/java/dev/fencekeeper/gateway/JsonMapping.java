package dev.fencekeeper.gateway;

import dev.fencekeeper.proto.ResultCode;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.ratis.thirdparty.com.google.gson.JsonElement;
import org.apache.ratis.thirdparty.com.google.gson.JsonObject;
import org.apache.ratis.thirdparty.com.google.gson.JsonParser;
import org.apache.ratis.thirdparty.com.google.protobuf.InvalidProtocolBufferException;
import org.apache.ratis.thirdparty.com.google.protobuf.Message;
import org.apache.ratis.thirdparty.com.google.protobuf.MessageOrBuilder;
import org.apache.ratis.thirdparty.com.google.protobuf.util.JsonFormat;
import org.apache.ratis.thirdparty.io.netty.handler.codec.http.HttpResponseStatus;

/**
 * The gateway's JSON: protobuf's JSON mapping of {@code fencing.proto} (field names in
 * lowerCamelCase, either spelling accepted on input; 64-bit integers as strings; bytes as base64;
 * enums by name; fields at their default left out), with one change: a result code is called {@code
 * status}, the name the command line's {@code --json} gives it. Unknown fields are refused, not
 * ignored, and so is a body that is not UTF-8 (RFC 8259): decoded leniently, each bad byte would
 * become U+FFFD and the call would name another key or resource than the client sent.
 */
final class JsonMapping {
  static final String STATUS = "status";
  private static final String CODE = "code";

  private static final JsonFormat.Parser PARSER = JsonFormat.parser();
  private static final JsonFormat.Printer PRINTER =
      JsonFormat.printer().omittingInsignificantWhitespace();

  private JsonMapping() {}

  /**
   * {@code length} bytes of {@code bytes} from {@code offset} as text, refused unless they are
   * well-formed UTF-8 (no invalid byte, overlong form or encoded surrogate).
   */
  static String utf8(byte[] bytes, int offset, int length) throws BadJson {
    CharsetDecoder strict =
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
    ByteBuffer in = ByteBuffer.wrap(bytes, offset, length);
    try {
      return strict.decode(in).toString();
    } catch (CharacterCodingException e) {
      // The decoder stops at the first bad sequence: the buffer's position is where it starts.
      throw new BadJson(
          "the body is not valid UTF-8 (bad byte "
              + String.format("%02x", bytes[in.position()] & 0xff)
              + " at offset "
              + (in.position() - offset)
              + ")");
    }
  }

  /** Merges {@code json} into {@code builder}; an empty body is the empty message. */
  static <B extends Message.Builder> B parse(String json, B builder) throws BadJson {
    if (json.isBlank()) {
      return builder;
    }
    try {
      PARSER.merge(json, builder);
      return builder;
    } catch (InvalidProtocolBufferException | RuntimeException e) {
      // JsonFormat reports wrong types and malformed JSON alike; its message names the field.
      throw new BadJson(shorten(String.valueOf(e.getMessage())));
    }
  }

  /** {@code message} as one line of JSON, result codes named {@code status}. */
  static String print(MessageOrBuilder message) {
    String json;
    try {
      json = PRINTER.print(message);
    } catch (InvalidProtocolBufferException e) {
      // Only Any fields with unknown types fail to print; fencing.proto has none.
      throw new IllegalStateException(e);
    }
    JsonElement tree = JsonParser.parseString(json);
    renameCodes(tree);
    return tree.toString();
  }

  /** The JSON of a rejection the gateway makes itself (no call reached the service). */
  static String rejection(ResultCode code, String message) {
    JsonObject o = new JsonObject();
    o.addProperty(STATUS, code.name());
    o.addProperty("message", message);
    return o.toString();
  }

  /**
   * Every {@code code} key becomes {@code status}; in fencing.proto only result codes are called
   * {@code code} (Response, KeepAliveAnswer).
   */
  private static void renameCodes(JsonElement element) {
    if (element.isJsonObject()) {
      JsonObject object = element.getAsJsonObject();
      JsonElement code = object.remove(CODE);
      for (Map.Entry<String, JsonElement> e : object.entrySet()) {
        renameCodes(e.getValue());
      }
      if (code != null) {
        JsonObject renamed = new JsonObject();
        renamed.add(STATUS, code);
        object.entrySet().forEach(e -> renamed.add(e.getKey(), e.getValue()));
        object.entrySet().clear();
        renamed.entrySet().forEach(e -> object.add(e.getKey(), e.getValue()));
      }
    } else if (element.isJsonArray()) {
      element.getAsJsonArray().forEach(JsonMapping::renameCodes);
    }
  }

  /**
   * The HTTP status that goes with a result code: 2xx when the call did what was asked or a query
   * was answered (a validate's STALE or EXPIRED is an answer), 404 for NOT_FOUND, 409 when the
   * resource's lease or a token stands in the way, 400/403 for the caller's input or identity, 410
   * for events no longer kept, 429 for OVERLOADED, 503 when the answer could not be had here.
   */
  static HttpResponseStatus httpStatus(ResultCode code) {
    return switch (code) {
      case GRANTED,
          RENEWED,
          RELEASED,
          ACCEPTED,
          FOUND,
          CURRENT,
          STALE,
          EXPIRED,
          REVOKED,
          BATCH_ANSWERED ->
          HttpResponseStatus.OK;
      case NOT_FOUND -> HttpResponseStatus.NOT_FOUND;
      case HELD,
          WAITING,
          LOCK_DELAYED,
          LEASE_LOST,
          NOT_HOLDER,
          STALE_TOKEN,
          LEASE_EXPIRED,
          UNKNOWN_TOKEN ->
          HttpResponseStatus.CONFLICT;
      case INVALID_ARGUMENT -> HttpResponseStatus.BAD_REQUEST;
      case PERMISSION_DENIED -> HttpResponseStatus.FORBIDDEN;
      case COMPACTED -> HttpResponseStatus.GONE;
      case OVERLOADED -> HttpResponseStatus.TOO_MANY_REQUESTS;
      case NOT_LEADER -> HttpResponseStatus.TEMPORARY_REDIRECT;
      case UNAVAILABLE -> HttpResponseStatus.SERVICE_UNAVAILABLE;
      case INTERNAL, RESULT_CODE_UNSPECIFIED, UNRECOGNIZED ->
          HttpResponseStatus.INTERNAL_SERVER_ERROR;
    };
  }

  /**
   * One line for the caller: protobuf's and Gson's messages without the exception class names they
   * carry, and without Gson's advice on its own API.
   */
  private static String shorten(String message) {
    String oneLine =
        message
            .replaceAll("([a-z][a-z0-9_]*\\.)+[A-Z][A-Za-z0-9_$]*(Exception|Error): ", "")
            .replaceAll("\\s*See https?://\\S+", "")
            .replaceAll("\\s*Use JsonReader\\.setStrictness\\S* to accept malformed JSON", "")
            .replaceAll("\\s+", " ")
            .trim();
    return oneLine.length() <= 200 ? oneLine : oneLine.substring(0, 200) + "…";
  }

  /** A body that is not JSON of the route's request message. */
  static final class BadJson extends Exception {
    private static final long serialVersionUID = 1L;

    BadJson(String message) {
      super(message, null, false, false);
    }
  }
}
