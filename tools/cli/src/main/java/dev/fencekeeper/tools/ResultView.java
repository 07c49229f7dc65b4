package dev.fencekeeper.tools;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Locale;

/**
 * How one cluster answer is shown: a readable line for people, or a JSON object for scripts. Works
 * on the wire {@link Response} so every code and field combination can be rendered (and tested)
 * without a cluster.
 *
 * @param resource the resource the call was about (null for a failure before the call was made)
 * @param key the key for value calls (write, read), null for lease calls
 * @param leaseQuery true for {@code lease show}, whose {@code live=false} is an answer, not a
 *     default
 */
record ResultView(Response response, String resource, String key, boolean leaseQuery) {

  static ResultView ofLease(Response response, String resource) {
    return new ResultView(response, resource, null, false);
  }

  static ResultView ofLeaseQuery(Response response, String resource) {
    return new ResultView(response, resource, null, true);
  }

  static ResultView ofValue(Response response, String resource, String key) {
    return new ResultView(response, resource, key, false);
  }

  ResultCode code() {
    return response.getCode();
  }

  ExitCode exitCode() {
    return ExitCode.of(code());
  }

  // ---------------------------------------------------------------------------------------------
  // JSON

  /**
   * {@code status} (the result code name) always; other fields only when set, except where zero,
   * false or empty is itself the answer: {@code value} of a found key, {@code live} of a lease
   * query.
   */
  ObjectNode json() {
    Response r = response;
    ObjectNode o = Json.object();
    o.put("status", code().name());
    if (resource != null) {
      o.put("resource", resource);
    }
    String shownKey = !r.getKey().isEmpty() ? r.getKey() : key;
    if (shownKey != null && !shownKey.isEmpty()) {
      o.put("key", shownKey);
    }
    putIfSet(o, "token", r.getToken());
    putIfSet(o, "currentToken", r.getCurrentToken());
    putIfSet(o, "sentToken", r.getSentToken());
    if (!r.getHolderOwner().isEmpty()) {
      o.put("holderOwner", r.getHolderOwner());
    }
    putIfSet(o, "expiresAtMs", r.getExpiresAtMs());
    putIfSet(o, "ttlMs", r.getTtlMs());
    if (leaseQuery || r.getLive()) {
      o.put("live", r.getLive());
    }
    if (r.getAlreadyEnded()) {
      o.put("alreadyEnded", true);
    }
    if (isFoundValue() || !r.getValue().isEmpty()) {
      byte[] bytes = r.getValue().toByteArray();
      o.put("value", new String(bytes, StandardCharsets.UTF_8));
      if (!isUtf8(bytes)) {
        // The lossy string above is still handy to eyeball; the bytes themselves are only here.
        o.put("valueBase64", Base64.getEncoder().encodeToString(bytes));
      }
    }
    putIfSet(o, "acceptedToken", r.getAcceptedToken());
    putIfSet(o, "version", r.getVersion());
    putIfSet(o, "writtenAtMs", r.getWrittenAtMs());
    putIfSet(o, "position", r.getPosition());
    putIfSet(o, "nowMs", r.getNowMs());
    if (!r.getMessage().isEmpty()) {
      o.put("message", r.getMessage());
    }
    return o;
  }

  private static void putIfSet(ObjectNode o, String field, long value) {
    if (value != 0) {
      o.put(field, value);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // One readable line

  String humanLine() {
    return humanLine(System.currentTimeMillis());
  }

  /** As {@link #humanLine()}, with the local clock reading given (for tests). */
  String humanLine(long localNowMs) {
    Response r = response;
    return switch (code()) {
      case GRANTED, RENEWED ->
          code() + " " + resource + " token=" + r.getToken() + expiry(localNowMs) + owner();
      case RELEASED ->
          "RELEASED "
              + resource
              + " token="
              + r.getToken()
              + (r.getAlreadyEnded() ? " (the lease had already ended)" : "");
      case ACCEPTED ->
          "ACCEPTED "
              + valueName()
              + " token="
              + r.getAcceptedToken()
              + " version="
              + r.getVersion()
              + (r.getMessage().isEmpty() ? "" : " (" + r.getMessage() + ")");
      case FOUND -> key == null ? foundLease(localNowMs) : foundValue();
      case CURRENT ->
          "CURRENT "
              + resource
              + " token="
              + r.getToken()
              + " is the live lease"
              + owner()
              + commaExpiry(localNowMs);
      case REVOKED ->
          "REVOKED "
              + resource
              + " token="
              + r.getToken()
              + (r.getMessage().isEmpty() ? "" : " (" + r.getMessage() + ")");
      case HELD ->
          "HELD: "
              + resource
              + " is held by token "
              + r.getToken()
              + owner()
              + commaExpiry(localNowMs);
      case STALE_TOKEN, STALE ->
          r.getCurrentToken() > r.getSentToken()
              ? code()
                  + ": token "
                  + r.getSentToken()
                  + " is stale; "
                  + resource
                  + " has token "
                  + r.getCurrentToken()
                  + holder()
              : code() + ": " + r.getMessage();
      default -> code() + ": " + (r.getMessage().isEmpty() ? "(no details)" : r.getMessage());
    };
  }

  private boolean isFoundValue() {
    return key != null && code() == ResultCode.FOUND;
  }

  private String valueName() {
    return resource + "/" + (response.getKey().isEmpty() ? key : response.getKey());
  }

  private String foundValue() {
    Response r = response;
    byte[] bytes = r.getValue().toByteArray();
    String shown =
        isUtf8(bytes)
            ? Json.write(
                new String(bytes, StandardCharsets.UTF_8)) // quoted and escaped: stays one line
            : "base64:" + Base64.getEncoder().encodeToString(bytes);
    return "FOUND "
        + valueName()
        + " = "
        + shown
        + " (token "
        + r.getAcceptedToken()
        + ", version "
        + r.getVersion()
        + ")";
  }

  private String foundLease(long localNowMs) {
    Response r = response;
    if (!r.getLive()) {
      return "FOUND " + resource + " has no live lease (last token " + r.getCurrentToken() + ")";
    }
    return "FOUND " + resource + " token=" + r.getToken() + expiry(localNowMs) + owner();
  }

  /**
   * " expires in 4.2s". State-machine time only moves when an entry commits, so on an idle cluster
   * the answer's {@code nowMs} lags; the later of it and the local clock is the better estimate of
   * "now", and either way the figure errs towards less time left, never more.
   */
  private String expiry(long localNowMs) {
    Response r = response;
    if (r.getExpiresAtMs() == 0 || r.getNowMs() == 0) {
      return "";
    }
    long remainingMs = r.getExpiresAtMs() - Math.max(r.getNowMs(), localNowMs);
    return remainingMs <= 0
        ? " expired"
        : String.format(Locale.ROOT, " expires in %.1fs", remainingMs / 1000.0);
  }

  private String commaExpiry(long localNowMs) {
    String expiry = expiry(localNowMs);
    return expiry.isEmpty() ? "" : "," + expiry;
  }

  private String owner() {
    return response.getHolderOwner().isEmpty() ? "" : " (owner " + response.getHolderOwner() + ")";
  }

  private String holder() {
    return response.getHolderOwner().isEmpty()
        ? " and no live lease"
        : " held by " + response.getHolderOwner();
  }

  static boolean isUtf8(byte[] bytes) {
    try {
      StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes));
      return true;
    } catch (CharacterCodingException e) {
      return false;
    }
  }
}
