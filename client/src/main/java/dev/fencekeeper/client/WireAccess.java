package dev.fencekeeper.client;

import dev.fencekeeper.client.wire.Wire;
import dev.fencekeeper.proto.LeaseEvent;
import dev.fencekeeper.proto.NodeInfo;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/** Gives {@link Wire} the package's internals; loaded by Wire at its first use. */
final class WireAccess implements Wire.Access {
  static {
    Wire.install(new WireAccess());
  }

  @Override
  public Response response(Result result) {
    return result.response;
  }

  @Override
  public Result result(Response response) {
    return new Result(response);
  }

  @Override
  public CompletableFuture<Result> sendAsync(FencingClient client, Request request) {
    return client.calls().sendAsync(request);
  }

  @Override
  public NodeInfo nodeInfo(FencingClient client, String peerId, Duration timeout) {
    return client.calls().nodeInfo(peerId, timeout);
  }

  @Override
  public NodeInfo nodeInfo(FencingAdmin admin, String peerId, Duration timeout) {
    return admin.nodeInfo(peerId, timeout);
  }

  @Override
  public CompletableFuture<Void> dial(FencingClient client) {
    return client.calls().port().dial();
  }

  @Override
  public CompletableFuture<Void> dial(FencingAdmin admin) {
    return admin.port().dial();
  }

  @Override
  public Watch watch(
      FencingClient client,
      String name,
      boolean prefix,
      long afterIndex,
      Consumer<LeaseEvent> listener) {
    return new Watch(client.calls(), name, prefix, afterIndex, listener);
  }
}
