package dev.fencekeeper.statemachine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.fencekeeper.client.AcquireOptions;
import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.FencingException;
import dev.fencekeeper.client.KeyChange;
import dev.fencekeeper.client.Lease;
import dev.fencekeeper.client.LeaseHeldException;
import dev.fencekeeper.client.ReadConsistency;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.client.Watch;
import dev.fencekeeper.client.WriteResult;
import dev.fencekeeper.testing.RefusingPorts;
import dev.fencekeeper.testing.TestCluster;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * The Java client never misleads a worker: an outage is UNAVAILABLE from every acquire form (never
 * "someone else holds it"), only an accepted write reads as one, a closed client refuses every
 * call, null arguments are refused by name, documented bounds hold, and the transport's own logging
 * goes where the application's SLF4J configuration says.
 */
@Timeout(180)
class JavaClientHonestyClusterTest {
  // Long enough that no lease of these tests ends by itself on a loaded machine, unless it should.
  private static final Duration TTL = Duration.ofSeconds(30);

  @TempDir Path dataDir;

  private static Throwable failureOf(Supplier<?> call) {
    return catchThrowable(call::get);
  }

  private static Throwable failureOfFuture(CompletableFuture<?> future) {
    try {
      future.get(60, TimeUnit.SECONDS);
      return null;
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  private static void assertUnavailable(Throwable t, String form) {
    assertThat(t).as(form).isInstanceOf(FencingException.class);
    assertThat(t)
        .as(form + " must not say the resource is held")
        .isNotInstanceOf(LeaseHeldException.class);
    assertThat(((FencingException) t).code()).as(form).isEqualTo(ResultCode.UNAVAILABLE);
  }

  // Guarantee: with no node reachable, every acquire form — blocking or not, waiting or not,
  // tryAcquire — fails with FencingException UNAVAILABLE, never LeaseHeldException, and a waiting
  // acquire says so at the unreachable bound instead of after its whole wait.
  @Test
  void everyAcquireFormReportsAnOutageAsUnavailable() {
    try (RefusingPorts dead = RefusingPorts.open(3);
        FencingClient client =
            FencingClient.builder()
                .peers(dead.peers())
                .unreachableTimeout(Duration.ofSeconds(1))
                .build()) {
      Duration wait = Duration.ofSeconds(20);
      long start = System.nanoTime();
      assertUnavailable(failureOf(() -> client.acquire("r", TTL, wait)), "acquire(wait)");
      assertThat(Duration.ofNanos(System.nanoTime() - start))
          .as("a waiting acquire reports the outage, not the end of its wait")
          .isLessThan(Duration.ofSeconds(10));
      assertUnavailable(failureOfFuture(client.acquireAsync("r", TTL, wait)), "acquireAsync(wait)");
      assertUnavailable(
          failureOf(() -> client.acquire("r", TTL, wait, AcquireOptions.defaults().owner("o"))),
          "acquire(wait, options)");
      assertUnavailable(failureOf(() -> client.acquire("r", TTL)), "acquire");
      assertUnavailable(failureOfFuture(client.acquireAsync("r", TTL)), "acquireAsync");
      assertUnavailable(failureOf(() -> client.tryAcquire("r", TTL)), "tryAcquire");
      assertUnavailable(failureOfFuture(client.tryAcquireAsync("r", TTL)), "tryAcquireAsync");
    }
  }

  // Guarantee: an acquire waiting in line when the whole cluster stops fails with UNAVAILABLE, not
  // with LeaseHeldException at the end of its wait.
  @Test
  void aWaitCutShortByTheClusterStoppingSaysUnavailable() throws Exception {
    try (TestCluster cluster = TestCluster.start(dataDir)) {
      cluster.awaitLeader();
      try (FencingClient holder = quickToClose(cluster);
          FencingClient waiter = quickToClose(cluster)) {
        Lease held = holder.acquire("queue", Duration.ofSeconds(30));
        CompletableFuture<Lease> waiting =
            waiter.acquireAsync("queue", TTL, Duration.ofSeconds(40));
        // Queued: the holder's lease record names a waiter once the acquire was logged.
        Thread.sleep(1_500);
        assertThat(waiting).isNotDone();
        long stopped = System.nanoTime();
        cluster.stopAll();
        assertUnavailable(failureOfFuture(waiting), "a wait the cluster's stop cut short");
        assertThat(Duration.ofNanos(System.nanoTime() - stopped))
            .as("well before the 40 s wait ends")
            .isLessThan(Duration.ofSeconds(25));
        held.abandon();
      }
    }
  }

  private static FencingClient quickToClose(TestCluster cluster) {
    return FencingClient.builder()
        .config(cluster.config())
        .unreachableTimeout(Duration.ofSeconds(1))
        .closeTimeout(Duration.ofSeconds(1))
        .build();
  }

  // Guarantee: with the cluster down, a write is answered UNAVAILABLE within the documented
  // unreachable bound (3 s by default), not that bound twice (once to learn the cluster's limits,
  // once for the write).
  @Test
  void aWriteWithTheClusterDownKeepsTheDocumentedBound() {
    try (RefusingPorts dead = RefusingPorts.open(3);
        FencingClient client = FencingClient.builder().peers(dead.peers()).build()) {
      long start = System.nanoTime();
      WriteResult r = client.write("r", 1, "k", new byte[] {1});
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      assertThat(r.code()).isEqualTo(ResultCode.UNAVAILABLE);
      assertThat(r.isAccepted()).isFalse();
      assertThat(took).as(r.message()).isLessThan(Duration.ofMillis(4_500));
    }
  }

  // Guarantee: no WARN of the connection logger ends in an empty reason: a cluster whose nodes
  // accept connections and never answer is reported with why (the calls' timeout).
  @Test
  void theConnectionWarningSaysWhy() throws Exception {
    Logger connection = (Logger) LoggerFactory.getLogger("dev.fencekeeper.client.connection");
    ListAppender<ILoggingEvent> seen = new ListAppender<>();
    seen.start();
    connection.addAppender(seen);
    List<ServerSocket> silent = new ArrayList<>();
    try {
      StringBuilder peers = new StringBuilder();
      for (int i = 0; i < 3; i++) {
        ServerSocket s = new ServerSocket();
        s.bind(new InetSocketAddress("127.0.0.1", 0)); // listens, never answers
        silent.add(s);
        peers.append(i == 0 ? "" : ",").append("127.0.0.1:").append(s.getLocalPort());
      }
      try (FencingClient client =
          FencingClient.builder()
              .peers(peers.toString())
              .requestTimeout(Duration.ofMillis(300))
              .callTimeout(Duration.ofSeconds(1))
              .build()) {
        assertThat(client.read("r", "k").code()).isEqualTo(ResultCode.UNAVAILABLE);
      }
      List<String> warnings =
          seen.list.stream()
              .filter(e -> e.getLevel() == Level.WARN)
              .map(ILoggingEvent::getFormattedMessage)
              .toList();
      assertThat(warnings).isNotEmpty();
      for (String w : warnings) {
        // Other clients of this JVM log here too; none may leave the reason out.
        assertThat(w.trim()).as(w).doesNotEndWith(":").doesNotEndWith("answered");
      }
    } finally {
      connection.detachAppender(seen);
      for (ServerSocket s : silent) {
        s.close();
      }
    }
  }

  // Guarantee: what Ratis's shaded gRPC logs through java.util.logging (TcpMetrics' "Epoll
  // available" at start) reaches SLF4J under its own name, not java.util.logging's console.
  @Test
  void theTransportsJavaUtilLoggingGoesToSlf4j() {
    String name = "org.apache.ratis.thirdparty.io.grpc.netty.TcpMetrics";
    Logger slf4j = (Logger) LoggerFactory.getLogger(name);
    ListAppender<ILoggingEvent> seen = new ListAppender<>();
    seen.start();
    slf4j.addAppender(seen);
    List<java.util.logging.LogRecord> console = new ArrayList<>();
    java.util.logging.Handler rootSpy =
        new java.util.logging.Handler() {
          @Override
          public void publish(java.util.logging.LogRecord record) {
            if (record.getLoggerName() != null && record.getLoggerName().startsWith(name)) {
              console.add(record);
            }
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        };
    java.util.logging.Logger root = java.util.logging.Logger.getLogger("");
    root.addHandler(rootSpy);
    try (RefusingPorts dead = RefusingPorts.open(1);
        FencingClient client = FencingClient.builder().peers(dead.peers()).build()) {
      java.util.logging.Logger.getLogger(name)
          .log(java.util.logging.Level.WARNING, "transport says {0}", "hello");
      assertThat(console).as("java.util.logging's own handlers").isEmpty();
      assertThat(seen.list)
          .extracting(ILoggingEvent::getFormattedMessage)
          .containsExactly("transport says hello");
    } finally {
      root.removeHandler(rootSpy);
      slf4j.detachAppender(seen);
    }
  }

  // Guarantee: every call on a closed client throws IllegalStateException, the calls of its
  // leases included; closing a lease afterwards is harmless. Null arguments are refused with a
  // message that names them, before anything is sent.
  @Test
  void aClosedClientRefusesEveryCallAndNullsAreRefusedByName() {
    try (TestCluster cluster = TestCluster.start(dataDir)) {
      cluster.awaitLeader();
      FencingClient client = quickToClose(cluster);
      Lease lease = client.acquire("closed", TTL);
      assertThatThrownBy(() -> lease.write("k", (byte[]) null))
          .isInstanceOf(NullPointerException.class)
          .hasMessageContaining("value of key 'k' must not be null");
      assertThatThrownBy(() -> lease.write("k", (String) null))
          .isInstanceOf(NullPointerException.class)
          .hasMessageContaining("value must not be null");
      assertThatThrownBy(() -> client.write("closed", lease.token(), null, new byte[0]))
          .isInstanceOf(NullPointerException.class)
          .hasMessageContaining("key must not be null");
      assertThatThrownBy(() -> client.read(null, "k"))
          .isInstanceOf(NullPointerException.class)
          .hasMessageContaining("resource must not be null");
      client.close();

      List<Runnable> calls =
          List.of(
              () -> client.acquire("x", TTL),
              () -> client.acquire("x", TTL, Duration.ofSeconds(1)),
              () -> client.acquireAsync("x", TTL),
              () -> client.acquireAsync("x", TTL, Duration.ofSeconds(1)),
              () -> client.tryAcquire("x", TTL),
              () -> client.acquireToken("x", TTL, "o"),
              () -> client.renew("x", 1, null),
              () -> client.release("x", 1),
              () -> client.write("x", 1, "k", new byte[0]),
              () -> client.read("x", "k", ReadConsistency.STALE),
              () -> client.lease("x"),
              () -> client.validate("x", 1),
              () -> client.revoke("x", "why"),
              () -> client.listLeases("", "", 10),
              () -> client.watch("x", false, Watch.FROM_NOW, e -> {}),
              () -> client.nodeStatus("n1", Duration.ofSeconds(1)),
              () -> lease.write("k", "v"),
              () -> lease.writeAsync(List.of(KeyChange.put("k", "v")), null),
              lease::renew);
      for (int i = 0; i < calls.size(); i++) {
        assertThatThrownBy(calls.get(i)::run)
            .as("call %d after close()", i)
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("closed");
      }
      lease.close(); // released by the client's close already: nothing to do, nothing thrown
      client.close();
    }
  }

  // Guarantee: only ACCEPTED reads as written. A write past its lease (LEASE_EXPIRED), with a token
  // never issued for the resource (UNKNOWN_TOKEN), and one of 10 MiB (INVALID_ARGUMENT) are each
  // not accepted and throw with their code from orThrow().
  @Test
  void everyRefusedWriteIsNotAcceptedAndOrThrowSaysWhy() throws Exception {
    try (TestCluster cluster = TestCluster.start(dataDir)) {
      cluster.awaitLeader();
      try (FencingClient client = quickToClose(cluster)) {
        try (Lease lease = client.acquire("codes", TTL)) {
          assertThat(lease.write("k", "v").orThrow().isAccepted()).isTrue();
          expectRefused(
              client.write("codes", lease.token() + 1_000, "k", new byte[] {1}),
              ResultCode.UNKNOWN_TOKEN);
          expectRefused(lease.write("k", new byte[10 * 1024 * 1024]), ResultCode.INVALID_ARGUMENT);
        }
        Result raw = client.acquireToken("codes-expired", Duration.ofMillis(500), "raw");
        assertThat(raw.code()).isEqualTo(ResultCode.GRANTED);
        Thread.sleep(2_000);
        expectRefused(
            client.write("codes-expired", raw.token(), "k", new byte[] {1}),
            ResultCode.LEASE_EXPIRED);
      }
    }
  }

  private static void expectRefused(WriteResult r, ResultCode code) {
    assertThat(r.code()).as(r.toString()).isEqualTo(code);
    assertThat(r.isAccepted()).isFalse();
    assertThat(r.isSuccess()).isFalse();
    assertThatThrownBy(r::orThrow)
        .isInstanceOf(FencingException.class)
        .satisfies(e -> assertThat(((FencingException) e).code()).isEqualTo(code));
  }

  // Guarantee: close() takes about as long with one lease as with three (each release is answered
  // in milliseconds; nothing else should be waited for).
  @Test
  void closeIsAsFastWithOneLeaseAsWithThree() throws InterruptedException {
    try (TestCluster cluster = TestCluster.start(dataDir)) {
      cluster.awaitLeader();
      // Warm the cluster and this JVM up first.
      closeTimed(cluster, 2, false);
      Duration one = closeTimed(cluster, 1, false);
      Duration three = closeTimed(cluster, 3, false);
      Duration watching = closeTimed(cluster, 1, true);
      assertThat(one).as("one lease %s, three %s", one, three).isLessThan(Duration.ofMillis(700));
      assertThat(three).as("three leases").isLessThan(Duration.ofMillis(700));
      assertThat(watching).as("one lease and a watch").isLessThan(Duration.ofMillis(700));
    }
  }

  private static Duration closeTimed(TestCluster cluster, int leases, boolean watch)
      throws InterruptedException {
    FencingClient client = FencingClient.builder().config(cluster.config()).build();
    for (int i = 0; i < leases; i++) {
      client.acquire("close-" + leases + "-" + i, Duration.ofSeconds(30));
    }
    if (watch) {
      client.watch("close-", true, Watch.FROM_NOW, e -> {});
      Thread.sleep(500); // its long poll is open
    }
    long start = System.nanoTime();
    client.close();
    return Duration.ofNanos(System.nanoTime() - start);
  }
}
