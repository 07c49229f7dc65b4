package dev.fencekeeper.client.wire;

import dev.fencekeeper.client.FencingAdmin;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.Watch;
import dev.fencekeeper.proto.LeaseEvent;
import dev.fencekeeper.proto.NodeInfo;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * Internal: the wire messages behind the client's public types, for fencekeeper's own tools and
 * tests (the command line prints every field of an answer; hostile-input tests send malformed
 * requests). Not part of the API: the generated classes it exposes change with {@code
 * fencing.proto}.
 */
public final class Wire {
  /** What the client package gives this class; installed by it, once. */
  public interface Access {
    /** See {@link Wire#response}. */
    Response response(Result result);

    /** See {@link Wire#result}. */
    Result result(Response response);

    /** See {@link Wire#sendAsync}. */
    CompletableFuture<Result> sendAsync(FencingClient client, Request request);

    /** See {@link Wire#nodeInfo}. */
    NodeInfo nodeInfo(FencingClient client, String peerId, Duration timeout);

    /** See {@link Wire#nodeInfo(FencingAdmin, String, Duration)}. */
    NodeInfo nodeInfo(FencingAdmin admin, String peerId, Duration timeout);

    /** See {@link Wire#dial(FencingClient)}. */
    CompletableFuture<Void> dial(FencingClient client);

    /** See {@link Wire#dial(FencingAdmin)}. */
    CompletableFuture<Void> dial(FencingAdmin admin);

    /** See {@link Wire#watch}. */
    Watch watch(
        FencingClient client,
        String name,
        boolean prefix,
        long afterIndex,
        Consumer<LeaseEvent> listener);
  }

  private static volatile Access access;

  private Wire() {}

  /** Called by the client package when it loads; later calls are ignored. */
  public static synchronized void install(Access implementation) {
    if (access == null) {
      access = implementation;
    }
  }

  private static Access access() {
    Access a = access;
    if (a == null) {
      try {
        Class.forName("dev.fencekeeper.client.WireAccess", true, Wire.class.getClassLoader());
      } catch (ClassNotFoundException e) {
        throw new IllegalStateException(e);
      }
      a = access;
    }
    return a;
  }

  /** The wire answer behind {@code result}. */
  public static Response response(Result result) {
    return access().response(result);
  }

  /** A result carrying {@code response}. */
  public static Result result(Response response) {
    return access().result(response);
  }

  /**
   * Sends a request envelope as built by the caller, as the one call of the client protocol it
   * names (the client's own calls build no envelope): commands to the leader, queries as they ask,
   * unchecked by the client (malformed input included). An envelope naming no unary call is
   * answered INVALID_ARGUMENT without being sent.
   */
  public static Result send(FencingClient client, Request request) {
    return sendAsync(client, request).join();
  }

  /** The asynchronous form of {@link #send}. */
  public static CompletableFuture<Result> sendAsync(FencingClient client, Request request) {
    return access().sendAsync(client, request);
  }

  /**
   * What node {@code peerId} says about itself; fails if it does not answer within {@code timeout}.
   */
  public static NodeInfo nodeInfo(FencingClient client, String peerId, Duration timeout) {
    return access().nodeInfo(client, peerId, timeout);
  }

  /**
   * What node {@code peerId} says about itself, every field, asked of that node alone over its
   * client port; fails if it does not answer within {@code timeout}.
   */
  public static NodeInfo nodeInfo(FencingAdmin admin, String peerId, Duration timeout) {
    return access().nodeInfo(admin, peerId, timeout);
  }

  /**
   * Connects {@code client} to every node it was given at once; completes when a majority of the
   * connections are up, or each is up or has failed (refused, TLS handshake refused), never
   * exceptionally. A tool that bounds a call by a deadline of its own dials first, so that the
   * connection and TLS set-up of a cold process is not counted against the call.
   */
  public static CompletableFuture<Void> dial(FencingClient client) {
    return access().dial(client);
  }

  /** As {@link #dial(FencingClient)}, for an admin handle. */
  public static CompletableFuture<Void> dial(FencingAdmin admin) {
    return access().dial(admin);
  }

  /** A watch delivering the wire's events. */
  public static Watch watch(
      FencingClient client,
      String name,
      boolean prefix,
      long afterIndex,
      Consumer<LeaseEvent> listener) {
    return access().watch(client, name, prefix, afterIndex, listener);
  }
}
