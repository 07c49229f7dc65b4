package dev.fencekeeper.statemachine;

import dev.fencekeeper.config.PrivateFiles;
import dev.fencekeeper.proto.BackupRequest;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Iterator;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * Serves backups: the first request freezes the state into a file (in snapshot format, token
 * sequence included) on the node that answers; later requests read it in chunks, so a backup of any
 * size fits through bounded messages. A backup nobody finishes fetching is deleted after {@link
 * #ABANDONED_AFTER_MS}.
 */
final class BackupStore {
  static final int MAX_CHUNK = 4 << 20;
  private static final long ABANDONED_AFTER_MS = 10 * 60 * 1000;

  private final Path dir;
  private final Map<String, Pending> pending = new ConcurrentHashMap<>();

  BackupStore(Path dir) {
    this.dir = dir;
  }

  private record Pending(Path file, long size, long createdAtMs) {}

  /** What the frozen state held, read while it was frozen. */
  record Frozen(long lastIssuedToken, int resourceCount) {}

  /** {@code frozen} runs {@link SnapshotStore#writeTo} under the state machine's read lock. */
  Response serve(BackupRequest request, Function<OutputStream, Frozen> frozen) {
    forgetAbandoned();
    try {
      if (request.getBackupId().isEmpty()) {
        PrivateFiles.directory(dir);
        String id = UUID.randomUUID().toString();
        Path file = dir.resolve("backup-" + id + ".bin");
        Frozen state;
        try (OutputStream out =
            new BufferedOutputStream(PrivateFiles.newOutputStream(file), 1 << 16)) {
          state = frozen.apply(out);
        }
        long size = Files.size(file);
        pending.put(id, new Pending(file, size, System.currentTimeMillis()));
        return chunk(id, request.toBuilder().setBackupId(id).build()).toBuilder()
            .setCurrentToken(state.lastIssuedToken())
            .setVersion(state.resourceCount())
            .build();
      }
      return chunk(request.getBackupId(), request);
    } catch (IOException | UncheckedIOException e) {
      return WireCodec.internal("backup failed: " + e.getMessage());
    }
  }

  private Response chunk(String id, BackupRequest request) throws IOException {
    Pending p = pending.get(id);
    if (p == null) {
      return Response.newBuilder()
          .setCode(ResultCode.NOT_FOUND)
          .setMessage(
              "backup " + id + " is not on this node (the leader changed?): start the backup again")
          .build();
    }
    int max = request.getMaxBytes() <= 0 ? MAX_CHUNK : Math.min(request.getMaxBytes(), MAX_CHUNK);
    long offset = Math.max(0, request.getOffset());
    int length = (int) Math.max(0, Math.min(max, p.size - offset));
    ByteBuffer buffer = ByteBuffer.allocate(length);
    try (FileChannel channel = FileChannel.open(p.file, StandardOpenOption.READ)) {
      while (buffer.hasRemaining() && channel.read(buffer, offset + buffer.position()) > 0) {
        // keep reading until the chunk is full
      }
    }
    if (offset + length >= p.size) {
      pending.remove(id);
      Files.deleteIfExists(p.file);
    }
    return Response.newBuilder()
        .setCode(ResultCode.FOUND)
        .setBackupId(id)
        .setTotalBytes(p.size)
        .setChunk(ByteString.copyFrom(buffer.flip()))
        .build();
  }

  private void forgetAbandoned() {
    long now = System.currentTimeMillis();
    for (Iterator<Pending> it = pending.values().iterator(); it.hasNext(); ) {
      Pending p = it.next();
      if (now - p.createdAtMs > ABANDONED_AFTER_MS) {
        it.remove();
        try {
          Files.deleteIfExists(p.file);
        } catch (IOException ignored) {
          // a leftover temp file is harmless; the next start's cleanup may remove it
        }
      }
    }
  }
}
