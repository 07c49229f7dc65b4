package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import java.util.Base64;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;

class ResultViewTest {
  private static final String RESOURCE = "daily-sales-report";
  private static final long NOW = 1_800_000_000_000L;
  private static final long LOCAL_CLOCK_BEHIND = NOW - 60_000;
  private static final ObjectMapper MAPPER = new ObjectMapper();

  // Guarantee: a stale write reads as the README's example: the sent token, the newer one, and its
  // holder.
  @Test
  void staleTokenLineNamesBothTokensAndTheHolder() {
    Response stale =
        Response.newBuilder()
            .setCode(ResultCode.STALE_TOKEN)
            .setSentToken(41)
            .setCurrentToken(44)
            .setToken(44)
            .setHolderOwner("worker-b")
            .setNowMs(NOW)
            .setMessage("token 41 is stale")
            .build();

    assertThat(ResultView.ofValue(stale, RESOURCE, "k").humanLine())
        .isEqualTo(
            "STALE_TOKEN: token 41 is stale; daily-sales-report has token 44 held by worker-b");
  }

  // Guarantee: a grant reads as the README's example: token, time left in state-machine time,
  // owner.
  @Test
  void grantedLineShowsTokenExpiryAndOwner() {
    Response granted =
        Response.newBuilder()
            .setCode(ResultCode.GRANTED)
            .setToken(41)
            .setCurrentToken(41)
            .setHolderOwner("worker-a")
            .setExpiresAtMs(NOW + 5_000)
            .setTtlMs(5_000)
            .setNowMs(NOW)
            .build();

    assertThat(ResultView.ofLease(granted, RESOURCE).humanLine(LOCAL_CLOCK_BEHIND))
        .isEqualTo("GRANTED daily-sales-report token=41 expires in 5.0s (owner worker-a)");
  }

  // Guarantee: time left never looks longer than it is when the answer's state-machine time lags
  // the clock.
  @Test
  void expiryCountsFromTheLaterOfStateMachineTimeAndTheLocalClock() {
    Response shown =
        Response.newBuilder()
            .setCode(ResultCode.FOUND)
            .setLive(true)
            .setToken(7)
            .setHolderOwner("worker-b")
            .setExpiresAtMs(NOW + 30_000)
            .setNowMs(NOW)
            .build();

    assertThat(ResultView.ofLeaseQuery(shown, RESOURCE).humanLine(NOW + 10_000))
        .isEqualTo("FOUND daily-sales-report token=7 expires in 20.0s (owner worker-b)");
    assertThat(ResultView.ofLeaseQuery(shown, RESOURCE).humanLine(NOW + 31_000))
        .isEqualTo("FOUND daily-sales-report token=7 expired (owner worker-b)");
  }

  // Guarantee: every result code renders as one line that starts with its name, and as JSON whose
  // status is it.
  @Test
  void everyCodeRendersOneLineAndItsStatus() throws Exception {
    for (ResultCode code : ResultCode.values()) {
      if (code == ResultCode.UNRECOGNIZED) {
        continue;
      }
      Response r = Response.newBuilder().setCode(code).setMessage("why").build();
      for (ResultView view :
          new ResultView[] {
            ResultView.ofLease(r, RESOURCE), ResultView.ofValue(r, RESOURCE, "k")
          }) {
        assertThat(view.humanLine()).as(code.name()).startsWith(code.name()).doesNotContain("\n");
        assertThat(MAPPER.readTree(Json.write(view.json())).get("status").asText())
            .isEqualTo(code.name());
      }
    }
  }

  // Guarantee: JSON omits fields that are unset where that is unambiguous, and always carries
  // status.
  @Test
  void jsonOmitsUnsetFields() throws Exception {
    Response stale =
        Response.newBuilder()
            .setCode(ResultCode.STALE_TOKEN)
            .setSentToken(41)
            .setCurrentToken(44)
            .setMessage("token 41 is stale")
            .build();

    JsonNode json = MAPPER.readTree(Json.write(ResultView.ofValue(stale, RESOURCE, "k").json()));

    assertThat(json.get("status").asText()).isEqualTo("STALE_TOKEN");
    assertThat(json.get("sentToken").asLong()).isEqualTo(41);
    assertThat(json.get("currentToken").asLong()).isEqualTo(44);
    assertThat(json.has("value")).isFalse();
    assertThat(json.has("version")).isFalse();
    assertThat(json.has("live")).isFalse();
    assertThat(json.has("alreadyEnded")).isFalse();
    assertThat(json.has("holderOwner")).isFalse();
  }

  // Guarantee: where zero or empty is the answer (an empty stored value, a lease that is not live),
  // JSON says so.
  @Test
  void jsonKeepsMeaningfulEmptyValues() throws Exception {
    Response emptyValue =
        Response.newBuilder().setCode(ResultCode.FOUND).setAcceptedToken(9).setVersion(1).build();
    Response notLive = Response.newBuilder().setCode(ResultCode.FOUND).setCurrentToken(9).build();

    JsonNode value =
        MAPPER.readTree(Json.write(ResultView.ofValue(emptyValue, RESOURCE, "k").json()));
    JsonNode lease = MAPPER.readTree(Json.write(ResultView.ofLeaseQuery(notLive, RESOURCE).json()));

    assertThat(value.get("value").asText()).isEmpty();
    assertThat(lease.get("live").asBoolean(true)).isFalse();
  }

  // Guarantee: bytes that are not UTF-8 survive the trip to a script exactly, as valueBase64.
  @Test
  void binaryValuesAreGivenAsBase64() throws Exception {
    byte[] bytes = {(byte) 0xff, 0, (byte) 0xc3};
    Response found =
        Response.newBuilder()
            .setCode(ResultCode.FOUND)
            .setValue(ByteString.copyFrom(bytes))
            .setAcceptedToken(9)
            .setVersion(2)
            .build();
    ResultView view = ResultView.ofValue(found, RESOURCE, "k");

    JsonNode json = MAPPER.readTree(Json.write(view.json()));

    assertThat(Base64.getDecoder().decode(json.get("valueBase64").asText())).isEqualTo(bytes);
    assertThat(view.humanLine())
        .isEqualTo(
            "FOUND daily-sales-report/k = base64:"
                + Base64.getEncoder().encodeToString(bytes)
                + " (token 9, version 2)");
  }

  // Guarantee: a value with a newline or quote still prints as one line, quoted so it cannot be
  // misread.
  @Test
  void textValuesAreQuotedOnOneLine() {
    Response found =
        Response.newBuilder()
            .setCode(ResultCode.FOUND)
            .setValue(ByteString.copyFromUtf8("two\nlines \"quoted\""))
            .setAcceptedToken(9)
            .setVersion(1)
            .build();

    assertThat(ResultView.ofValue(found, RESOURCE, "k").humanLine())
        .isEqualTo(
            "FOUND daily-sales-report/k = \"two\\nlines \\\"quoted\\\"\" (token 9, version 1)");
  }
}
