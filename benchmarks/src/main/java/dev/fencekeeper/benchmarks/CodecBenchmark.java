package dev.fencekeeper.benchmarks;

import dev.fencekeeper.core.Code;
import dev.fencekeeper.core.Command;
import dev.fencekeeper.core.Outcome;
import dev.fencekeeper.proto.KeyWrite;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.WriteRequest;
import dev.fencekeeper.statemachine.WireCodec;
import dev.fencekeeper.statemachine.proto.LoggedCommand;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.InvalidProtocolBufferException;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The wire work around one fenced write, in the order a request meets it: the client encodes the
 * {@code Request}; the leader decodes it, validates it into a {@code Command} and wraps the
 * client's bytes with its time stamp into a {@code LoggedCommand}; every replica decodes that entry
 * back into a {@code Command}; the answer is encoded as a {@code Response}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class CodecBenchmark {
  private Request request;
  private byte[] requestBytes;
  private byte[] entryBytes;
  private Outcome accepted;

  @Setup
  public void setUp() {
    request =
        Request.newBuilder()
            .setWrite(
                WriteRequest.newBuilder()
                    .setResource("daily-sales-report")
                    .setToken(123_456)
                    .setRequestId("7f1c6a2e-4b7d-4f0e-9a51-3c2d1e0f9b8a")
                    .addWrites(
                        KeyWrite.newBuilder()
                            .setKey("2026-11-29")
                            .setValue(ByteString.copyFrom(new byte[100]))))
            .build();
    requestBytes = request.toByteArray();
    entryBytes = stamp();
    accepted = Outcome.of(Code.ACCEPTED).token(123_456).nowMs(1_000_000).build();
  }

  @Benchmark
  public byte[] clientEncodesRequest() {
    return request.toByteArray();
  }

  /** What the leader's startTransaction does with a write's bytes. */
  @Benchmark
  public byte[] leaderDecodesAndStamps() {
    return stamp();
  }

  private byte[] stamp() {
    try {
      Request parsed = Request.parseFrom(requestBytes);
      Command command = WireCodec.toCommand(parsed);
      if (command == null) {
        throw new IllegalStateException("not a command");
      }
      return LoggedCommand.newBuilder()
          .setClientRequest(UnsafeByteOperations.unsafeWrap(requestBytes))
          .setStampMs(1_000_000)
          .build()
          .toByteArray();
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException(e);
    }
  }

  /** What every replica does with a committed entry before the core sees it. */
  @Benchmark
  public Command replicaDecodesEntry() throws InvalidProtocolBufferException {
    LoggedCommand logged = LoggedCommand.parseFrom(entryBytes);
    return WireCodec.toCommand(Request.parseFrom(logged.getClientRequest()));
  }

  @Benchmark
  public byte[] replicaEncodesResponse() {
    Response response = WireCodec.toResponse(accepted);
    return response.toByteArray();
  }
}
