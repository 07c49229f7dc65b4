package dev.fencekeeper.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.fencekeeper.proto.Response;
import org.junit.jupiter.api.Test;

/** Only ACCEPTED reads as a written value; every other answer is a failure to whoever checks. */
class WriteResultTest {
  private static WriteResult answered(ResultCode code) {
    return new WriteResult(
        Response.newBuilder().setCode(code.toWire()).setMessage("why: " + code).build());
  }

  // Guarantee: isAccepted() and orThrow() pass ACCEPTED alone; every other code, the ones a write
  // can get back included (STALE_TOKEN, LEASE_EXPIRED, UNKNOWN_TOKEN, INVALID_ARGUMENT,
  // UNAVAILABLE), is not accepted, not a success, and orThrow() throws it with its code.
  @Test
  void onlyAcceptedPasses() {
    for (ResultCode code : ResultCode.values()) {
      WriteResult r = answered(code);
      if (code == ResultCode.ACCEPTED) {
        assertThat(r.isAccepted()).isTrue();
        assertThat(r.orThrow()).isSameAs(r);
        continue;
      }
      assertThat(r.isAccepted()).as("%s", code).isFalse();
      FencingException e = catchThrowableOfType(FencingException.class, r::orThrow);
      assertThat(e).as("%s", code).isNotNull();
      assertThat(e.code()).isEqualTo(code);
      assertThat(e.getMessage()).contains("why: " + code);
    }
  }

  // Guarantee: Result.orThrow() passes exactly the codes isSuccess() names, and throws the rest.
  @Test
  void resultOrThrowFollowsIsSuccess() {
    for (ResultCode code : ResultCode.values()) {
      Result r = new Result(Response.newBuilder().setCode(code.toWire()).build());
      FencingException e = catchThrowableOfType(FencingException.class, r::orThrow);
      assertThat(e == null).as("%s", code).isEqualTo(code.isSuccess());
    }
  }
}
