package dev.fencekeeper.client;

import dev.fencekeeper.proto.KeyWrite;
import dev.fencekeeper.proto.NodeInfoQuery;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.WriteRequest;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fenced writes of one {@link FencingClient}: each checked against the limits the cluster told
 * (learnt once, from a node's status), so that one too big is refused before it is sent and batches
 * are sized by the cluster's rules, then sent with a request id that makes a retry safe.
 */
final class FencedWrites {
  private static final Logger LOG = LoggerFactory.getLogger(FencingClient.class);
  private static final long LIMITS_RETRY_NANOS = TimeUnit.SECONDS.toNanos(10);

  private final ClusterCalls calls;
  // The limits a node said it enforces; null until one did. Writes wait for them (once), so that
  // one too big for the cluster is refused here, before it is sent, and batches are sized by the
  // cluster's rules.
  private volatile dev.fencekeeper.proto.ServerLimits serverLimits;
  private CompletableFuture<Void> learningLimits; // guarded by this
  // When asking last failed (guarded by this): writes meanwhile go out unchecked rather than each
  // waiting.
  private long limitsUnknownSinceNanos;
  // A node answered without limits (an older version): nothing to learn, so writes never wait for
  // it.
  private volatile boolean limitsNotServed;
  private final RequestIds requestIds;

  FencedWrites(ClusterCalls calls, RequestIds requestIds) {
    this.requestIds = requestIds;
    this.calls = calls;
  }

  /** See {@link FencingClient#writeAsync(String, long, List, String)}. */
  CompletableFuture<WriteResult> writeAsync(
      String resource, long token, List<KeyChange> changes, String requestId) {
    long startedNanos = System.nanoTime();
    if (serverLimits != null || limitsNotServed) {
      return checkedWrite(resource, token, changes, requestId, startedNanos);
    }
    return learnLimits()
        .thenCompose(known -> checkedWrite(resource, token, changes, requestId, startedNanos));
  }

  /**
   * The write, unless it is bigger than the cluster's limits allow: then refused without sending
   * it.
   */
  private CompletableFuture<WriteResult> checkedWrite(
      String resource, long token, List<KeyChange> changes, String requestId, long startedNanos) {
    String tooBig = tooBig(resource, changes);
    if (tooBig != null) {
      return CompletableFuture.completedFuture(
          new WriteResult(
              Response.newBuilder()
                  .setCode(dev.fencekeeper.proto.ResultCode.INVALID_ARGUMENT)
                  .setSentToken(token)
                  .setMessage(tooBig + "; nothing was sent")
                  .build()));
    }
    return sendWrite(resource, token, changes, requestId, startedNanos);
  }

  /**
   * Why {@code changes} exceed the limits the cluster told, or null (also while they are unknown).
   */
  private String tooBig(String resource, List<KeyChange> changes) {
    dev.fencekeeper.proto.ServerLimits limits = serverLimits;
    if (limits == null) {
      return null;
    }
    int resourceBytes = utf8Length(resource);
    if (limits.getMaxResourceBytes() > 0 && resourceBytes > limits.getMaxResourceBytes()) {
      return "resource: "
          + resourceBytes
          + " bytes exceed the cluster's limits.resource-name.max-bytes ("
          + limits.getMaxResourceBytes()
          + ")";
    }
    long total = 0;
    for (KeyChange change : changes) {
      int keyBytes = utf8Length(change.key());
      if (limits.getMaxKeyBytes() > 0 && keyBytes > limits.getMaxKeyBytes()) {
        return "key: "
            + keyBytes
            + " bytes exceed the cluster's limits.key.max-bytes ("
            + limits.getMaxKeyBytes()
            + ")";
      }
      int valueBytes = change.value() == null ? 0 : change.value().length;
      if (limits.getMaxValueBytes() > 0 && valueBytes > limits.getMaxValueBytes()) {
        return "value: "
            + valueBytes
            + " bytes for key '"
            + change.key()
            + "' exceed the cluster's limits.value.max-bytes ("
            + limits.getMaxValueBytes()
            + ")";
      }
      total += valueBytes;
    }
    if (limits.getMaxValueBytes() > 0 && total > limits.getMaxValueBytes()) {
      return "value: "
          + total
          + " bytes in one write exceed the cluster's limits.value.max-bytes ("
          + limits.getMaxValueBytes()
          + ")";
    }
    return null;
  }

  private static int utf8Length(String s) {
    return s == null ? 0 : s.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
  }

  /**
   * Asks the nodes, one after another, for the limits they enforce (a node-info query, answered by
   * the node itself). Completes normally either way, within the unreachable bound or the call
   * timeout, whichever is shorter (the question is part of the write's call): without an answer the
   * write goes out unchecked, the cluster still checks it, and the next write asks again.
   */
  private CompletableFuture<Void> learnLimits() {
    synchronized (this) {
      if (serverLimits != null) {
        return CompletableFuture.completedFuture(null);
      }
      if (learningLimits != null
          && learningLimits.isDone()
          && System.nanoTime() - limitsUnknownSinceNanos < LIMITS_RETRY_NANOS) {
        return learningLimits;
      }
      if (learningLimits == null || learningLimits.isDone()) {
        CompletableFuture<Void> asking =
            askForLimits()
                .orTimeout(limitsQuestionMs(), TimeUnit.MILLISECONDS)
                .handle(
                    (ok, error) -> {
                      if (error != null) {
                        LOG.debug("The cluster's limits are not known yet: {}", error.toString());
                        synchronized (this) {
                          limitsUnknownSinceNanos = System.nanoTime();
                        }
                      }
                      return null;
                    });
        learningLimits = asking;
      }
      return learningLimits;
    }
  }

  private long limitsQuestionMs() {
    return Math.min(calls.unreachableTimeout().toMillis(), calls.callTimeout().toMillis());
  }

  /**
   * One node-info query: whichever node answers it tells the limits, which every node of a cluster
   * shares.
   */
  private CompletableFuture<Void> askForLimits() {
    CompletableFuture<Response> asked;
    try {
      asked =
          calls
              .port()
              .call(
                  new Rpc.Call<>(Rpc.NODE_INFO, NodeInfoQuery.getDefaultInstance()),
                  limitsQuestionMs(),
                  null)
              .thenApply(ClientPortTransport.Answer::response);
    } catch (RuntimeException e) {
      asked = CompletableFuture.failedFuture(e);
    }
    return asked.thenAccept(
        response -> {
          if (!response.hasNode()) {
            // Refused, not answered (a TLS handshake): the limits stay unknown, the write says why.
            throw new java.util.concurrent.CompletionException(
                new ClientPortTransport.CallFailed(
                    response.getCode() + ": " + response.getMessage()));
          }
          if (!response.getNode().hasLimits()) {
            limitsNotServed = true; // a node of a version that does not tell them
            return;
          }
          synchronized (this) {
            if (serverLimits == null) {
              dev.fencekeeper.proto.ServerLimits limits = response.getNode().getLimits();
              calls.batchLimits(limits.getMaxRequestsPerBatch(), limits.getMaxValueBytes());
              serverLimits = limits;
              LOG.debug("The cluster enforces {}", limits);
            }
          }
        });
  }

  private CompletableFuture<WriteResult> sendWrite(
      String resource, long token, List<KeyChange> changes, String requestId, long startedNanos) {
    WriteRequest.Builder write =
        WriteRequest.newBuilder()
            .setResource(resource)
            .setToken(token)
            .setRequestId(requestId == null ? requestIds.next() : requestId);
    for (KeyChange change : changes) {
      write.addWrites(
          KeyWrite.newBuilder()
              .setKey(change.key())
              // Copied: the message is serialized after this method returns (and again for each
              // retry), when the caller may already be reusing its array.
              .setValue(ByteString.copyFrom(change.value()))
              .setDelete(change.delete()));
    }
    // Bounded from the call's start: the time spent learning the limits counts against it.
    return calls.command(Rpc.WRITE, write.build(), startedNanos).thenApply(WriteResult::new);
  }
}
