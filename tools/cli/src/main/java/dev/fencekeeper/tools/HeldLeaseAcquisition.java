package dev.fencekeeper.tools;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.FencingException;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.config.Durations;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * How the verbs that keep a lease while they run ({@code lease hold}, {@code lease run}) take it: a
 * lease renewed in the background, or the answer that refused it. A wait that ends without a grant
 * answers HELD, as {@code lease acquire --wait} does; {@code --timeout} bounds the whole
 * acquisition.
 *
 * @param lease the granted lease, or null
 * @param refusal why there is none, or null
 */
record HeldLeaseAcquisition(Lease lease, Response refusal) {

  static HeldLeaseAcquisition acquire(
      FencingClient fencing, String resource, AcquireFlags flags, Duration timeout)
      throws InterruptedException {
    CompletableFuture<Lease> pending =
        fencing.acquireAsync(
            resource, flags.ttl, flags.waits() ? flags.wait : Duration.ZERO, flags.options(null));
    try {
      Lease lease =
          timeout == null ? pending.get() : pending.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      return new HeldLeaseAcquisition(lease, null);
    } catch (TimeoutException e) {
      // Granted after all, later: nobody will use it, so give it back rather than let it run its
      // TTL.
      pending.thenAccept(Lease::close);
      return refused(
          Response.newBuilder()
              .setCode(ResultCode.UNAVAILABLE)
              .setMessage("not granted within " + Durations.format(timeout) + " (--timeout)")
              .build());
    } catch (ExecutionException e) {
      if (e.getCause() instanceof FencingException refused) {
        Response r = Wire.response(refused.result());
        return refused(
            r.getCode() != ResultCode.WAITING || !flags.waits()
                ? r
                : r.toBuilder()
                    .setCode(ResultCode.HELD)
                    .setMessage("still held after waiting " + Durations.format(flags.wait))
                    .build());
      }
      throw new IllegalStateException("acquire failed: " + e.getCause(), e.getCause());
    }
  }

  private static HeldLeaseAcquisition refused(Response response) {
    return new HeldLeaseAcquisition(null, response);
  }

  boolean granted() {
    return lease != null;
  }
}
