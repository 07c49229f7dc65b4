package dev.fencekeeper.tools.bench;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

/**
 * The bench's baseline: the cheapest state machine Ratis can run (a counter, as in Ratis's
 * examples). Each write adds the 8-byte number it carries; each read returns the total. Whatever
 * fencekeeper costs above this, in the same run on the same settings, is fencekeeper's own.
 */
final class CounterStateMachine extends BaseStateMachine {
  private long value;

  @Override
  public synchronized CompletableFuture<Message> applyTransaction(TransactionContext trx) {
    LogEntryProto entry = trx.getLogEntry();
    ByteBuffer data = entry.getStateMachineLogEntry().getLogData().asReadOnlyByteBuffer();
    value += data.remaining() >= Long.BYTES ? data.getLong() : 0;
    updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
    return CompletableFuture.completedFuture(encode(value));
  }

  @Override
  public synchronized CompletableFuture<Message> query(Message request) {
    return CompletableFuture.completedFuture(encode(value));
  }

  static Message encode(long number) {
    return Message.valueOf(
        UnsafeByteOperations.unsafeWrap(ByteBuffer.allocate(Long.BYTES).putLong(0, number)));
  }
}
