package dev.fencekeeper.statemachine;

import dev.fencekeeper.config.Limits;
import dev.fencekeeper.config.PrivateFiles;
import dev.fencekeeper.core.FencingState;
import dev.fencekeeper.core.LeaseRecord;
import dev.fencekeeper.core.StateImage;
import dev.fencekeeper.core.ValueRecord;
import dev.fencekeeper.core.Waiter;
import dev.fencekeeper.core.WriteReceipt;
import dev.fencekeeper.statemachine.proto.LeaseSnapshot;
import dev.fencekeeper.statemachine.proto.ReceiptSnapshot;
import dev.fencekeeper.statemachine.proto.ResourceSnapshot;
import dev.fencekeeper.statemachine.proto.SnapshotHeader;
import dev.fencekeeper.statemachine.proto.SnapshotTrailer;
import dev.fencekeeper.statemachine.proto.ValueSnapshot;
import dev.fencekeeper.statemachine.proto.WaiterSnapshot;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.DigestInputStream;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.ratis.io.MD5Hash;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.statemachine.SnapshotRetentionPolicy;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.MD5FileUtil;

/**
 * Writes and reads snapshot files of a {@link FencingState}. A snapshot is written to a temporary
 * file, forced to disk and atomically renamed, then given an MD5 file, so a crash at any point
 * leaves either the previous snapshot or the new one — never half of one — for the next start to
 * load.
 */
final class SnapshotStore {
  static final int FORMAT_VERSION = 1;
  private static final int RETAINED_SNAPSHOTS = 2;

  private final SimpleStateMachineStorage storage;
  private final Limits limits;

  SnapshotStore(SimpleStateMachineStorage storage, Limits limits) {
    this.storage = storage;
    this.limits = limits;
  }

  record Loaded(FencingState state, TermIndex termIndex) {}

  /**
   * Writes {@code image}, which reflects every entry up to {@code applied}, as the newest snapshot,
   * durably: when this returns, the file, its MD5 and the storage's latest snapshot say {@code
   * applied}. Needs no lock: the image is immutable.
   */
  void write(StateImage image, TermIndex applied) throws IOException {
    Path target = storage.getSnapshotFile(applied.getTerm(), applied.getIndex()).toPath();
    MD5Hash md5 = writeFile(image, target);
    storage.updateLatestSnapshot(new SingleFileSnapshotInfo(new FileInfo(target, md5), applied));
    storage.cleanupOldSnapshots(retention());
  }

  /**
   * Writes {@code image} to {@code target} through a temporary file and an atomic rename, then its
   * MD5 file; returns the MD5. The digest is taken from the bytes as they are written: reading a
   * large snapshot back only to digest it cost as much again as writing it.
   */
  static MD5Hash writeFile(StateImage image, Path target) throws IOException {
    Path tmp = target.resolveSibling(target.getFileName() + ".writing");
    MessageDigest digest = MD5FileUtil.newMD5();
    try (FileChannel channel = PrivateFiles.create(tmp);
        OutputStream out =
            new BufferedOutputStream(
                new DigestOutputStream(Channels.newOutputStream(channel), digest), 1 << 16)) {
      writeTo(image, out);
      out.flush();
      channel.force(true);
    } catch (IOException | RuntimeException e) {
      // E.g. no space left: the previous snapshot stays in place, and the partial one must not keep
      // its space.
      try {
        Files.deleteIfExists(tmp);
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
    Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    MD5Hash md5 = MD5Hash.newInstance(digest.digest());
    MD5FileUtil.saveMD5File(target.toFile(), md5);
    PrivateFiles.restrict(MD5FileUtil.getDigestFileForFile(target.toFile()).toPath());
    return md5;
  }

  /** The newest complete snapshot on disk, or null when there is none. */
  Loaded loadLatest() throws IOException {
    SingleFileSnapshotInfo info = storage.getLatestSnapshot();
    if (info == null) {
      return null;
    }
    return new Loaded(
        readFile(info.getFile().getPath(), info.getFile().getFileDigest(), limits),
        info.getTermIndex());
  }

  /** SHA-256 of {@code image} in snapshot form: equal digests mean identical states. */
  static String sha256(StateImage image) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      try (OutputStream out = new DigestOutputStream(OutputStream.nullOutputStream(), sha)) {
        writeTo(image, out);
      }
      return HexFormat.of().formatHex(sha.digest());
    } catch (IOException | NoSuchAlgorithmException e) {
      throw new IllegalStateException("cannot digest the state", e);
    }
  }

  /** Writes {@code image} as a backup's body and says what it holds. */
  static BackupStore.Frozen freeze(StateImage image, OutputStream out) {
    try {
      writeTo(image, out);
      return new BackupStore.Frozen(image.lastIssuedToken(), image.resources().size());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Reads the snapshot file {@code file}, checking it against {@code expected} (null: no MD5 to
   * check). The digest is taken in the same pass as the parse, and the state is returned only once
   * the whole file matched it; a parse failure of a file whose MD5 does not match is reported as
   * the corruption it is.
   */
  static FencingState readFile(Path file, MD5Hash expected, Limits limits) throws IOException {
    MessageDigest digest = MD5FileUtil.newMD5();
    FencingState state;
    try (InputStream in =
        new BufferedInputStream(
            new DigestInputStream(Files.newInputStream(file), digest), 1 << 16)) {
      try {
        state = readFrom(in, limits);
      } catch (IOException | RuntimeException e) {
        in.transferTo(OutputStream.nullOutputStream());
        checkDigest(file, expected, digest);
        throw e;
      }
      in.transferTo(
          OutputStream.nullOutputStream()); // the digest covers the whole file, not what was parsed
    }
    checkDigest(file, expected, digest);
    return state;
  }

  private static void checkDigest(Path file, MD5Hash expected, MessageDigest digest)
      throws IOException {
    if (expected == null) {
      return;
    }
    MD5Hash actual = MD5Hash.newInstance(digest.digest());
    if (!expected.equals(actual)) {
      throw new IOException("snapshot " + file + " is corrupt: MD5 " + actual + " != " + expected);
    }
  }

  static void writeTo(StateImage image, OutputStream out) throws IOException {
    List<StateImage.Resource> resources = image.resources();
    SnapshotHeader.newBuilder()
        .setFormatVersion(FORMAT_VERSION)
        .setNowMs(image.nowMs())
        .setTerm(image.term())
        .setLastIssuedToken(image.lastIssuedToken())
        .setLineage(image.lineage())
        .setResourceCount(resources.size())
        .build()
        .writeDelimitedTo(out);
    for (StateImage.Resource r : resources) {
      toProto(r).writeDelimitedTo(out);
    }
    SnapshotTrailer.newBuilder().setResourceCount(resources.size()).build().writeDelimitedTo(out);
  }

  static FencingState readFrom(InputStream in, Limits limits) throws IOException {
    SnapshotHeader header = SnapshotHeader.parseDelimitedFrom(in);
    if (header == null) {
      throw new IOException("snapshot is empty");
    }
    if (header.getFormatVersion() > FORMAT_VERSION) {
      throw new IOException(
          "snapshot format "
              + header.getFormatVersion()
              + " is newer than this build ("
              + FORMAT_VERSION
              + ")");
    }
    List<StateImage.Resource> resources = new ArrayList<>();
    for (long i = 0; i < header.getResourceCount(); i++) {
      ResourceSnapshot r = ResourceSnapshot.parseDelimitedFrom(in);
      if (r == null) {
        throw new IOException(
            "snapshot is truncated after " + i + " of " + header.getResourceCount() + " resources");
      }
      resources.add(image(r));
    }
    SnapshotTrailer trailer = SnapshotTrailer.parseDelimitedFrom(in);
    if (trailer == null || trailer.getResourceCount() != header.getResourceCount()) {
      throw new IOException("snapshot has no valid trailer: the file is incomplete");
    }
    return FencingState.restore(
        limits,
        new StateImage(
            header.getTerm(),
            header.getNowMs(),
            header.getLastIssuedToken(),
            header.getLineage(),
            resources));
  }

  static ResourceSnapshot toProto(StateImage.Resource r) {
    ResourceSnapshot.Builder b =
        ResourceSnapshot.newBuilder().setName(r.name()).setLastToken(r.lastToken());
    LeaseRecord lease = r.lease();
    if (lease != null) {
      b.setLease(
          LeaseSnapshot.newBuilder()
              .setToken(lease.token())
              .setOwner(lease.owner())
              .setTtlMs(lease.ttlMs())
              .setExpiresAtMs(lease.expiresAtMs())
              .setGraceUsed(lease.graceUsed())
              .setRequestId(lease.requestId())
              .setLockDelayMs(lease.lockDelayMs())
              .setIdentity(lease.identity())
              .setSessionId(lease.sessionId()));
    }
    for (Map.Entry<String, ValueRecord> e : r.values().entrySet()) {
      ValueRecord v = e.getValue();
      b.addValues(
          ValueSnapshot.newBuilder()
              .setKey(e.getKey())
              .setValue(UnsafeByteOperations.unsafeWrap(v.value()))
              .setAcceptedToken(v.acceptedToken())
              .setVersion(v.version())
              .setWrittenAtMs(v.writtenAtMs()));
    }
    for (Waiter w : r.waiters()) {
      b.addWaiters(
          WaiterSnapshot.newBuilder()
              .setRequestId(w.requestId())
              .setOwner(w.owner())
              .setTtlMs(w.ttlMs())
              .setLockDelayMs(w.lockDelayMs())
              .setEnqueuedAtMs(w.enqueuedAtMs())
              .setWaitUntilMs(w.waitUntilMs())
              .setAliveUntilMs(w.aliveUntilMs())
              .setIdentity(w.identity())
              .setSessionId(w.sessionId()));
    }
    b.setBlockedUntilMs(r.blockedUntilMs())
        .setExpiryObserved(r.expiryObserved())
        .setIdleSinceMs(r.idleSinceMs());
    for (WriteReceipt receipt : r.receipts()) {
      b.addReceipts(
          ReceiptSnapshot.newBuilder()
              .setRequestId(receipt.requestId())
              .setFirstKey(receipt.firstKey())
              .setVersion(receipt.version())
              .setWrittenAtMs(receipt.writtenAtMs()));
    }
    return b.build();
  }

  private static StateImage.Resource image(ResourceSnapshot r) {
    LeaseRecord lease = null;
    if (r.hasLease()) {
      LeaseSnapshot l = r.getLease();
      lease =
          new LeaseRecord(
              l.getToken(),
              l.getOwner(),
              l.getTtlMs(),
              l.getExpiresAtMs(),
              l.getGraceUsed(),
              l.getRequestId(),
              l.getLockDelayMs(),
              l.getIdentity(),
              l.getSessionId());
    }
    TreeMap<String, ValueRecord> values = new TreeMap<>();
    for (ValueSnapshot v : r.getValuesList()) {
      values.put(
          v.getKey(),
          new ValueRecord(
              v.getValue().toByteArray(),
              v.getAcceptedToken(),
              v.getVersion(),
              v.getWrittenAtMs()));
    }
    List<WriteReceipt> receipts = new ArrayList<>(r.getReceiptsCount());
    for (ReceiptSnapshot s : r.getReceiptsList()) {
      receipts.add(
          new WriteReceipt(s.getRequestId(), s.getFirstKey(), s.getVersion(), s.getWrittenAtMs()));
    }
    List<Waiter> waiters = new ArrayList<>(r.getWaitersCount());
    for (WaiterSnapshot w : r.getWaitersList()) {
      waiters.add(
          new Waiter(
              w.getRequestId(),
              w.getOwner(),
              w.getTtlMs(),
              w.getLockDelayMs(),
              w.getEnqueuedAtMs(),
              w.getWaitUntilMs(),
              w.getAliveUntilMs(),
              w.getIdentity(),
              w.getSessionId()));
    }
    return new StateImage.Resource(
        r.getName(),
        r.getLastToken(),
        lease,
        values,
        receipts,
        waiters,
        r.getBlockedUntilMs(),
        r.getExpiryObserved(),
        r.getIdleSinceMs());
  }

  private static SnapshotRetentionPolicy retention() {
    return new SnapshotRetentionPolicy() {
      @Override
      public int getNumSnapshotsRetained() {
        return RETAINED_SNAPSHOTS;
      }
    };
  }
}
