package dev.fencekeeper.client;

import dev.fencekeeper.proto.BackupRequest;
import dev.fencekeeper.proto.Response;
import java.util.concurrent.CompletableFuture;

/**
 * Downloads a backup ({@link FencingClient#backup}): the first call freezes the state on the
 * leader, after a read index, so the backup holds every write acknowledged before it; every further
 * chunk is asked of that node.
 */
final class BackupDownload {
  private BackupDownload() {}

  @SuppressWarnings("try") // out is closed before the move, so that the file moved is complete
  static Result to(ClusterCalls calls, java.nio.file.Path file) {
    java.nio.file.Path tmp = file.resolveSibling(file.getFileName() + ".partial");
    try (java.io.OutputStream out = dev.fencekeeper.config.PrivateFiles.newOutputStream(tmp)) {
      String[] frozenAt = new String[1];
      Result first = sendBackup(calls, BackupRequest.getDefaultInstance(), frozenAt);
      if (first.code() != ResultCode.FOUND) {
        return first;
      }
      Response r = first.response;
      first.response.getChunk().writeTo(out);
      long written = r.getChunk().size();
      while (written < r.getTotalBytes()) {
        Result next =
            sendBackup(
                calls,
                BackupRequest.newBuilder().setBackupId(r.getBackupId()).setOffset(written).build(),
                frozenAt);
        if (next.code() != ResultCode.FOUND || next.response.getChunk().isEmpty()) {
          return next;
        }
        next.response.getChunk().writeTo(out);
        written += next.response.getChunk().size();
      }
      out.close();
      java.nio.file.Files.move(
          tmp,
          file,
          java.nio.file.StandardCopyOption.REPLACE_EXISTING,
          java.nio.file.StandardCopyOption.ATOMIC_MOVE);
      return new Result(r.toBuilder().clearChunk().build());
    } catch (java.io.IOException e) {
      return new Result(
          Response.newBuilder()
              .setCode(dev.fencekeeper.proto.ResultCode.INTERNAL)
              .setMessage("cannot write " + file + ": " + e.getMessage())
              .build());
    }
  }

  /**
   * One backup call: through the client port at the node {@code frozenAt[0]} names (the leader for
   * the first call, which records the node that answered).
   */
  private static Result sendBackup(ClusterCalls calls, BackupRequest request, String[] frozenAt) {
    CompletableFuture<Response> answer =
        calls
            .port()
            .call(new Rpc.Call<>(Rpc.BACKUP, request), calls.callTimeout().toMillis(), frozenAt[0])
            .thenApply(
                a -> {
                  frozenAt[0] = a.address();
                  return a.response();
                });
    return new Result(ClusterCalls.join(calls.settledQuery(answer)));
  }
}
