package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.client.wire.RequestKinds;
import dev.fencekeeper.core.Code;
import dev.fencekeeper.core.Command;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.ResultCode;
import java.util.EnumSet;
import java.util.Set;
import org.apache.ratis.thirdparty.com.google.protobuf.Descriptors.FieldDescriptor;
import org.junit.jupiter.api.Test;

/**
 * The rules the core states on its own types and the client states on the wire's, held together:
 * the codes, and which requests are queries or may be batched.
 */
class CodeMappingTest {
  // Guarantee: every core code has its own wire code, and the client reads it back under the same
  // name; OK, the answer to internal commands only, is the wire's unset code.
  @Test
  void everyCoreCodeMapsToItsWireCode() {
    Set<ResultCode> seen = EnumSet.noneOf(ResultCode.class);
    for (Code code : Code.values()) {
      ResultCode wire = WireCodec.resultCode(code);
      assertThat(seen.add(wire)).as("%s has a wire code of its own", code).isTrue();
      if (code == Code.OK) {
        assertThat(wire).isEqualTo(ResultCode.RESULT_CODE_UNSPECIFIED);
      } else {
        assertThat(wire.name()).isEqualTo(code.name());
        assertThat(dev.fencekeeper.client.ResultCode.valueOf(wire.name()).name())
            .isEqualTo(code.name());
      }
    }
  }

  // Guarantee: a request is a query exactly when the node finds no command in it, and a command
  // may be batched on the wire exactly when the core lets it into a batch.
  @Test
  void queriesAndBatchableCommandsAgreeWithTheCore() {
    for (Request.CommandCase kind : Request.CommandCase.values()) {
      if (kind == Request.CommandCase.COMMAND_NOT_SET) {
        continue;
      }
      Request request = sample(kind);
      Command command = WireCodec.toCommand(request);
      assertThat(RequestKinds.isQuery(kind)).as("%s is a query", kind).isEqualTo(command == null);
      assertThat(RequestKinds.isBatchable(kind))
          .as("%s may be batched", kind)
          .isEqualTo(command != null && Command.Batch.isBatchable(command));
    }
  }

  /** A request of {@code kind} with that command's default message. */
  private static Request sample(Request.CommandCase kind) {
    FieldDescriptor field = Request.getDescriptor().findFieldByNumber(kind.getNumber());
    Request.Builder b = Request.newBuilder();
    return b.setField(field, b.newBuilderForField(field).build()).build();
  }
}
