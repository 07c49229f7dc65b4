package dev.fencekeeper.tools;

import dev.fencekeeper.config.Limits;
import dev.fencekeeper.core.ResourceRecord;
import dev.fencekeeper.proto.BatchRequest;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.WriteRequest;
import dev.fencekeeper.statemachine.FencingStateMachine;
import java.util.function.LongSupplier;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.thirdparty.com.google.protobuf.InvalidProtocolBufferException;

/**
 * TEST ONLY: a deliberately broken node, for proving that the drills' history checker notices a
 * build that lost fencing. As leader it forges the token of every write that carries a superseded
 * one, replacing it with the resource's newest token before the write is logged, so the stale
 * writer's write is applied, on every replica alike, as if the current holder had sent it.
 */
final class UnfencedStateMachine extends FencingStateMachine {
  UnfencedStateMachine(Limits limits, LongSupplier wallClock, LongSupplier monotonicNanos) {
    super(limits, wallClock, monotonicNanos);
  }

  @Override
  public TransactionContext startTransaction(RaftClientRequest request) {
    Request decoded;
    try {
      decoded = Request.parseFrom(request.getMessage().getContent());
    } catch (InvalidProtocolBufferException e) {
      return super.startTransaction(request);
    }
    Request forged = forge(decoded);
    if (forged.equals(decoded)) {
      return super.startTransaction(request);
    }
    return super.startTransaction(
        RaftClientRequest.newBuilder()
            .set(request)
            .setMessage(Message.valueOf(forged.toByteString()))
            .build());
  }

  private Request forge(Request request) {
    if (request.hasWrite()) {
      return request.toBuilder().setWrite(forge(request.getWrite())).build();
    }
    if (request.hasBatch()) {
      BatchRequest.Builder batch = request.getBatch().toBuilder();
      for (int i = 0; i < batch.getRequestsCount(); i++) {
        batch.setRequests(i, forge(batch.getRequests(i)));
      }
      return request.toBuilder().setBatch(batch).build();
    }
    return request;
  }

  private WriteRequest forge(WriteRequest write) {
    Long newest =
        read(
            state -> {
              ResourceRecord r = state.resources().get(write.getResource());
              return r == null ? null : r.lastToken();
            });
    return newest != null && write.getToken() < newest
        ? write.toBuilder().setToken(newest).build()
        : write;
  }
}
