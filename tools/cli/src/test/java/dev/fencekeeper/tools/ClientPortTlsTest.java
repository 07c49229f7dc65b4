package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.config.ClusterConfig;
import dev.fencekeeper.config.LocalPorts;
import dev.fencekeeper.config.PeerAddress;
import dev.fencekeeper.config.Security;
import dev.fencekeeper.proto.AcquireRequest;
import dev.fencekeeper.proto.BackupRequest;
import dev.fencekeeper.proto.FencekeeperGrpc;
import dev.fencekeeper.proto.KeyWrite;
import dev.fencekeeper.proto.LeaseQuery;
import dev.fencekeeper.proto.Request;
import dev.fencekeeper.proto.Response;
import dev.fencekeeper.proto.ResultCode;
import dev.fencekeeper.proto.RevokeRequest;
import dev.fencekeeper.proto.SessionKeepAlive;
import dev.fencekeeper.proto.SessionOpen;
import dev.fencekeeper.proto.SessionRequest;
import dev.fencekeeper.proto.SessionResponse;
import dev.fencekeeper.proto.WriteRequest;
import dev.fencekeeper.server.FencekeeperServer;
import dev.fencekeeper.server.RaftConfig;
import dev.fencekeeper.statemachine.proto.LoggedCommand;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.StatusRuntimeException;
import org.apache.ratis.thirdparty.io.grpc.netty.GrpcSslContexts;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyChannelBuilder;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContextBuilder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client port on a TLS cluster: a client certificate is required, the caller is its CN, admin
 * operations need an admin CN, and commands of several identities that share a log entry are each
 * judged by their own identity.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(180)
class ClientPortTlsTest {
  static final String OTHER_CN = "second-client";

  @TempDir static Path dir;
  Path certs;
  ClusterConfig cluster;
  final List<FencekeeperServer> servers = new ArrayList<>();
  final List<ManagedChannel> channels = new ArrayList<>();

  @BeforeAll
  void start() throws IOException {
    certs = dir.resolve("certs");
    Certificates ca = Certificates.writeLocalSet(certs, Duration.ofDays(1));
    Instant now = Instant.now();
    ca.issue(certs, "client2", OTHER_CN, now.minusSeconds(60), now.plus(Duration.ofDays(1)));
    Properties p = new Properties();
    p.setProperty(
        "peers",
        "n1@127.0.0.1:"
            + LocalPorts.freeNodePort()
            + ",n2@127.0.0.1:"
            + LocalPorts.freeNodePort()
            + ",n3@127.0.0.1:"
            + LocalPorts.freeNodePort());
    p.setProperty("authz.admins", Certificates.ADMIN_CN);
    p.setProperty("authz.nodes", Certificates.NODE_CN);
    p.setProperty("raft.election.timeout.min", "2s");
    p.setProperty("raft.election.timeout.max", "4s");
    cluster = ClusterConfig.fromProperties(p);
    for (PeerAddress peer : cluster.peers()) {
      servers.add(
          FencekeeperServer.start(
              cluster
                  .withSecurity(
                      cluster
                          .security()
                          .withTls(Security.TlsFiles.inDirectory(certs, Certificates.NODE)))
                  .withNodeId(peer.id())
                  .withStorageDir(dir.resolve(peer.id()))));
    }
    await().atMost(Duration.ofSeconds(60)).until(() -> leader() != null);
  }

  @AfterAll
  void stop() throws IOException {
    channels.forEach(ManagedChannel::shutdownNow);
    for (FencekeeperServer s : servers) {
      s.close();
    }
  }

  private FencekeeperServer leader() {
    for (FencekeeperServer s : servers) {
      try {
        RaftServer.Division d = s.raftServer().getDivision(RaftConfig.groupId(cluster));
        if (d.getInfo().isLeader() && d.getInfo().isLeaderReady()) {
          return s;
        }
      } catch (IOException e) {
        // not serving
      }
    }
    return null;
  }

  /** A channel to the leader's client port presenting certificate {@code name} (null: none). */
  private ManagedChannel channel(String name) throws SSLException {
    SslContextBuilder tls =
        GrpcSslContexts.forClient().trustManager(certs.resolve("ca.crt").toFile());
    if (name != null) {
      tls.keyManager(certs.resolve(name + ".crt").toFile(), certs.resolve(name + ".key").toFile());
    }
    String address =
        await().atMost(Duration.ofSeconds(30)).until(this::leader, s -> s != null).clientAddress();
    ManagedChannel c = NettyChannelBuilder.forTarget(address).sslContext(tls.build()).build();
    channels.add(c);
    return c;
  }

  private FencekeeperGrpc.FencekeeperBlockingStub blocking(String name) throws SSLException {
    return FencekeeperGrpc.newBlockingStub(channel(name)).withDeadlineAfter(30, TimeUnit.SECONDS);
  }

  private static AcquireRequest acquire(String resource, String sessionId) {
    return AcquireRequest.newBuilder()
        .setResource(resource)
        .setOwner("o")
        .setTtlMs(60_000)
        .setSessionId(sessionId)
        .build();
  }

  // Guarantee: revoke and backup are admin operations: a non-admin identity is answered
  // PERMISSION_DENIED and nothing changes; the admin identity revokes.
  @Test
  void adminOperationsNeedAnAdminIdentity() throws Exception {
    var client = blocking(Certificates.CLIENT);
    Response lease = client.acquire(acquire("tls-revoke", ""));
    assertThat(lease.getCode()).isEqualTo(ResultCode.GRANTED);
    Response denied = client.revoke(RevokeRequest.newBuilder().setResource("tls-revoke").build());
    assertThat(denied.getCode()).isEqualTo(ResultCode.PERMISSION_DENIED);
    assertThat(denied.getMessage()).contains(Certificates.CLIENT_CN).contains("authz.admins");
    assertThat(client.getLease(LeaseQuery.newBuilder().setResource("tls-revoke").build()).getLive())
        .isTrue();
    assertThat(client.backup(BackupRequest.getDefaultInstance()).getCode())
        .isEqualTo(ResultCode.PERMISSION_DENIED);
    Response revoked =
        blocking(Certificates.ADMIN)
            .revoke(RevokeRequest.newBuilder().setResource("tls-revoke").build());
    assertThat(revoked.getCode()).isEqualTo(ResultCode.REVOKED);
    assertThat(revoked.getToken()).isEqualTo(lease.getToken());
  }

  // Guarantee: a client without a certificate does not get past the TLS handshake, so nothing it
  // sends is served.
  @Test
  void aClientWithoutACertificateIsRefused() throws Exception {
    var anonymous = blocking(null);
    assertThatThrownBy(() -> anonymous.acquire(acquire("tls-anonymous", "")))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
    assertThat(
            blocking(Certificates.CLIENT)
                .getLease(LeaseQuery.newBuilder().setResource("tls-anonymous").build())
                .getCode())
        .isEqualTo(ResultCode.NOT_FOUND);
  }

  // Guarantee: commands of two identities coalesced into one log entry are each judged by their
  // own identity: the holder's writes are accepted, the other identity's writes with the holder's
  // token are refused, and at least one entry carried both. Whether two bursts share an entry
  // depends on timing, so the bursts repeat (every answer checked each time) until one did.
  @Test
  void commandsSharingAnEntryKeepTheirOwnCallers() throws Exception {
    FencekeeperGrpc.FencekeeperStub holder = FencekeeperGrpc.newStub(channel(Certificates.CLIENT));
    FencekeeperGrpc.FencekeeperStub other = FencekeeperGrpc.newStub(channel("client2"));
    Response lease = blocking(Certificates.CLIENT).acquire(acquire("tls-shared", ""));
    List<Set<String>> callersPerEntry = new ArrayList<>();
    for (int round = 0;
        round < 20 && !callersPerEntry.contains(Set.of(Certificates.CLIENT_CN, OTHER_CN));
        round++) {
      long fromIndex = appliedOnLeader();
      List<CompletableFuture<Response>> mine = new ArrayList<>();
      List<CompletableFuture<Response>> theirs = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        WriteRequest w =
            WriteRequest.newBuilder()
                .setResource("tls-shared")
                .setToken(lease.getToken())
                .addWrites(KeyWrite.newBuilder().setKey("k").setValue(ByteString.copyFromUtf8("v")))
                .build();
        mine.add(call(observer -> holder.write(w, observer)));
        theirs.add(call(observer -> other.write(w, observer)));
      }
      for (CompletableFuture<Response> f : mine) {
        assertThat(f.get(30, TimeUnit.SECONDS).getCode()).isEqualTo(ResultCode.ACCEPTED);
      }
      for (CompletableFuture<Response> f : theirs) {
        assertThat(f.get(30, TimeUnit.SECONDS).getCode()).isEqualTo(ResultCode.PERMISSION_DENIED);
      }
      callersPerEntry.addAll(entriesWithCallers(fromIndex, appliedOnLeader()));
    }
    assertThat(callersPerEntry)
        .as("an entry carrying both identities' commands")
        .contains(Set.of(Certificates.CLIENT_CN, OTHER_CN));
  }

  // Guarantee: a session renews only the leases its own identity acquired; another identity may
  // not take over a session id that is open.
  @Test
  void aSessionRenewsOnlyItsIdentitysLeases() throws Exception {
    String id = "tls-session-abcdefghij";
    blocking(Certificates.CLIENT).acquire(acquire("tls-session-lease", id));
    Sessions mine = new Sessions(FencekeeperGrpc.newStub(channel(Certificates.CLIENT)), id);
    assertThat(mine.next().hasOpened()).isTrue();
    Sessions intruder = new Sessions(FencekeeperGrpc.newStub(channel("client2")), id);
    assertThat(intruder.next().getError().getCode()).isEqualTo(ResultCode.PERMISSION_DENIED);
    mine.in.onNext(
        SessionRequest.newBuilder().setKeepAlive(SessionKeepAlive.newBuilder().setSeq(1)).build());
    SessionResponse answer = mine.next();
    assertThat(answer.getKeepAlive().getRenewed()).isEqualTo(1);
    mine.in.onCompleted();

    String otherId = "tls-session-other-abcd";
    blocking(Certificates.CLIENT).acquire(acquire("tls-session-lease-2", otherId));
    Sessions foreign = new Sessions(FencekeeperGrpc.newStub(channel("client2")), otherId);
    assertThat(foreign.next().hasOpened()).isTrue();
    foreign.in.onNext(
        SessionRequest.newBuilder().setKeepAlive(SessionKeepAlive.newBuilder().setSeq(1)).build());
    assertThat(foreign.next().getKeepAlive().getRenewed()).isZero();
    foreign.in.onCompleted();
  }

  /** A session stream: what was sent on it and what came back. */
  private static final class Sessions {
    final BlockingQueue<SessionResponse> out = new LinkedBlockingQueue<>();
    final StreamObserver<SessionRequest> in;

    Sessions(FencekeeperGrpc.FencekeeperStub stub, String id) {
      in =
          stub.session(
              new StreamObserver<>() {
                @Override
                public void onNext(SessionResponse value) {
                  out.add(value);
                }

                @Override
                public void onError(Throwable t) {}

                @Override
                public void onCompleted() {}
              });
      in.onNext(
          SessionRequest.newBuilder().setOpen(SessionOpen.newBuilder().setSessionId(id)).build());
    }

    SessionResponse next() throws InterruptedException {
      SessionResponse r = out.poll(30, TimeUnit.SECONDS);
      assertThat(r).as("a session message").isNotNull();
      return r;
    }
  }

  private interface Call {
    void start(StreamObserver<Response> observer);
  }

  private static CompletableFuture<Response> call(Call call) {
    CompletableFuture<Response> answer = new CompletableFuture<>();
    call.start(
        new StreamObserver<>() {
          @Override
          public void onNext(Response value) {
            answer.complete(value);
          }

          @Override
          public void onError(Throwable t) {
            answer.completeExceptionally(t);
          }

          @Override
          public void onCompleted() {}
        });
    return answer;
  }

  private long appliedOnLeader() throws IOException {
    return leader()
        .raftServer()
        .getDivision(RaftConfig.groupId(cluster))
        .getInfo()
        .getLastAppliedIndex();
  }

  /** For each client entry in (from, to], the set of callers of the requests it carries. */
  private List<Set<String>> entriesWithCallers(long from, long to) throws IOException {
    RaftLog log = leader().raftServer().getDivision(RaftConfig.groupId(cluster)).getRaftLog();
    List<Set<String>> found = new ArrayList<>();
    for (long i = from + 1; i <= to; i++) {
      LogEntryProto entry = log.get(i);
      if (entry == null || !entry.hasStateMachineLogEntry()) {
        continue;
      }
      LoggedCommand logged = LoggedCommand.parseFrom(entry.getStateMachineLogEntry().getLogData());
      if (!logged.hasClientRequest() || !logged.getInnerCallers()) {
        continue;
      }
      Request r = Request.parseFrom(logged.getClientRequest());
      Set<String> callers = new HashSet<>();
      for (Request inner : r.hasBatch() ? r.getBatch().getRequestsList() : List.of(r)) {
        callers.add(inner.getCaller());
      }
      found.add(callers);
    }
    return found;
  }
}
