package dev.fencekeeper.tools.drill;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.ReadResult;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.WriteResult;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.tools.drill.history.HistoryRecorder;
import dev.fencekeeper.tools.drill.history.HistoryRecorder.Pending;
import dev.fencekeeper.tools.drill.history.Op;
import dev.fencekeeper.tools.drill.history.Op.OpType;
import dev.fencekeeper.tools.drill.history.Op.Outcome;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;

/** A client whose every call lands in the history, with its outcome classified once, here. */
final class RecordedClient {
  /**
   * Rejections that prove the command changed nothing; every other non-success may have been
   * applied.
   */
  private static final Set<ResultCode> DEFINITE_REJECTIONS =
      EnumSet.of(
          ResultCode.HELD,
          ResultCode.LOCK_DELAYED,
          ResultCode.WAITING,
          ResultCode.LEASE_LOST,
          ResultCode.NOT_HOLDER,
          ResultCode.STALE_TOKEN,
          ResultCode.LEASE_EXPIRED,
          ResultCode.UNKNOWN_TOKEN,
          ResultCode.INVALID_ARGUMENT);

  private final FencingClient client;
  private final HistoryRecorder recorder;
  private final String process;

  RecordedClient(FencingClient client, HistoryRecorder recorder, String process) {
    this.client = client;
    this.recorder = recorder;
    this.process = process;
  }

  String process() {
    return process;
  }

  static Outcome classify(ResultCode code, ResultCode success) {
    if (code == success) {
      return Outcome.OK;
    }
    return DEFINITE_REJECTIONS.contains(code) ? Outcome.FAIL : Outcome.UNKNOWN;
  }

  static Op.Result resultOf(OpType type, Response r) {
    return switch (type) {
      case ACQUIRE, RENEW ->
          new Op.Result(r.getToken(), 0, 0, null, r.getNowMs(), r.getExpiresAtMs());
      // A deduplicated retry answers with the first write's time: that is when it committed.
      case WRITE ->
          new Op.Result(
              r.getToken(),
              r.getVersion(),
              r.getAcceptedToken(),
              null,
              r.getWrittenAtMs() > 0 ? r.getWrittenAtMs() : r.getNowMs(),
              0);
      case READ ->
          new Op.Result(
              0,
              r.getVersion(),
              r.getAcceptedToken(),
              r.getCode() == ResultCode.FOUND ? r.getValue().toStringUtf8() : null,
              r.getNowMs(),
              0);
      case RELEASE -> new Op.Result(r.getToken(), 0, 0, null, r.getNowMs(), 0);
    };
  }

  static Op complete(Pending pending, OpType type, Response r, ResultCode success) {
    Outcome outcome = classify(r.getCode(), success);
    return pending.complete(
        outcome, r.getCode().name(), outcome == Outcome.OK ? resultOf(type, r) : Op.Result.NONE);
  }

  static Op complete(Pending pending, OpType type, Result r, ResultCode success) {
    return complete(pending, type, Wire.response(r), success);
  }

  /** An exception instead of an answer: the command may have been applied. */
  private static Op thrown(Pending p, RuntimeException e) {
    return p.complete(Outcome.UNKNOWN, "EXCEPTION " + e.getClass().getSimpleName(), Op.Result.NONE);
  }

  Op acquire(String resource, Duration ttl) {
    Pending p = recorder.invoke(process, OpType.ACQUIRE, resource, null, 0, null);
    try {
      return complete(
          p, OpType.ACQUIRE, client.acquireToken(resource, ttl, process), ResultCode.GRANTED);
    } catch (RuntimeException e) {
      return thrown(p, e);
    }
  }

  Op renew(String resource, long token, Duration ttl) {
    Pending p = recorder.invoke(process, OpType.RENEW, resource, null, token, null);
    try {
      return complete(p, OpType.RENEW, client.renew(resource, token, ttl), ResultCode.RENEWED);
    } catch (RuntimeException e) {
      return thrown(p, e);
    }
  }

  Op release(String resource, long token) {
    Pending p = recorder.invoke(process, OpType.RELEASE, resource, null, token, null);
    try {
      return complete(p, OpType.RELEASE, client.release(resource, token), ResultCode.RELEASED);
    } catch (RuntimeException e) {
      return thrown(p, e);
    }
  }

  Op write(String resource, String key, long token, String value) {
    Pending p = recorder.invoke(process, OpType.WRITE, resource, key, token, value);
    try {
      WriteResult r = client.write(resource, token, key, value.getBytes(StandardCharsets.UTF_8));
      return complete(p, OpType.WRITE, r, ResultCode.ACCEPTED);
    } catch (RuntimeException e) {
      return thrown(p, e);
    }
  }

  Op read(String resource, String key) {
    Pending p = recorder.invoke(process, OpType.READ, resource, key, 0, null);
    ReadResult r;
    try {
      r = client.read(resource, key);
    } catch (RuntimeException e) {
      return thrown(p, e);
    }
    Outcome outcome =
        r.code() == dev.fencekeeper.client.ResultCode.FOUND
                || r.code() == dev.fencekeeper.client.ResultCode.NOT_FOUND
            ? Outcome.OK
            : Outcome.UNKNOWN;
    return p.complete(
        outcome,
        r.code().name(),
        outcome == Outcome.OK ? resultOf(OpType.READ, Wire.response(r)) : Op.Result.NONE);
  }
}
