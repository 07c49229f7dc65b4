package dev.fencekeeper.tools;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fencekeeper.client.FencingException;
import dev.fencekeeper.proto.ResultCode;
import java.util.List;

/**
 * What an admin verb prints: readable lines, or with {@code --json} one JSON object whose {@code
 * status} is {@code OK} or the failure's result code, and the exit code that goes with it.
 */
record Report(ExitCode exit, ObjectNode json, List<String> lines) {
  static final String OK = "OK";

  /** A success: {@code json} gets {@code "status":"OK"} first. */
  static Report ok(ObjectNode json, List<String> lines) {
    ObjectNode o = Json.object().put("status", OK);
    o.setAll(json);
    return new Report(ExitCode.SUCCESS, o, lines);
  }

  /** A failure the cluster or the tool reported as {@code code}: one line {@code CODE: message}. */
  static Report failure(ResultCode code, String message) {
    ObjectNode o = Json.object().put("status", code.name()).put("message", message);
    return new Report(ExitCode.of(code), o, List.of(code.name() + ": " + message));
  }

  static Report failure(FencingException e) {
    String message = e.result().message().isEmpty() ? e.getMessage() : e.result().message();
    return failure(ResultCode.valueOf(e.code().name()), message);
  }

  /** Prints the report as asked and returns its exit code. */
  int print(CliContext context, boolean asJson) {
    if (asJson) {
      Json.print(context.out(), json);
    } else {
      lines.forEach(context.out()::println);
      context.out().flush();
    }
    return exit.code();
  }
}
