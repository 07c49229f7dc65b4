package dev.fencekeeper.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.testing.TestCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockExtender;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.support.LockException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * ShedLock's LockProvider contract (the cases of its test-support module's lock-provider and
 * extensible-lock-provider suites, written out with durations a loaded 2-core box keeps apart),
 * then what fencekeeper adds: the token, its growth, and the fence it enables. All against three
 * real nodes.
 */
@Timeout(120)
class FencekeeperLockProviderClusterTest {
  @TempDir static Path dataDir;
  static TestCluster cluster;
  static FencingClient client;
  static FencingClient otherInstance;

  FencekeeperLockProvider provider;
  String name;

  @BeforeAll
  static void startCluster() {
    cluster = TestCluster.start(dataDir);
    cluster.awaitLeader();
    client = cluster.newClient("instance-a");
    otherInstance = cluster.newClient("instance-b");
  }

  @AfterAll
  static void stopCluster() {
    cluster.close();
  }

  @BeforeEach
  void freshLockName(TestInfo test) {
    provider = new FencekeeperLockProvider(client);
    // Each test its own lock, so a lockAtLeastFor left running by one cannot block the next.
    name = test.getTestMethod().orElseThrow().getName();
  }

  // ---------------------------------------------------------------------------------------------
  // ShedLock's LockProvider contract.

  // Guarantee: a free lock is granted, held while unlocked is not called, and free after unlock.
  @Test
  void shouldCreateLock() {
    Optional<SimpleLock> lock = provider.lock(config(name, Duration.ofMinutes(5), Duration.ZERO));
    assertThat(lock).isNotEmpty();
    assertLocked(name);
    lock.get().unlock();
    assertUnlocked(name);
  }

  // Guarantee: a held lock is not granted a second time, even to the same instance.
  @Test
  void shouldNotReturnSecondLock() {
    Optional<SimpleLock> lock = provider.lock(config(name, Duration.ofMinutes(5), Duration.ZERO));
    assertThat(lock).isNotEmpty();
    assertThat(provider.lock(config(name, Duration.ofMinutes(5), Duration.ZERO))).isEmpty();
    assertThat(
            new FencekeeperLockProvider(otherInstance)
                .lock(config(name, Duration.ofMinutes(5), Duration.ZERO)))
        .isEmpty();
    lock.get().unlock();
  }

  // Guarantee: locks of different names are independent.
  @Test
  void shouldCreateTwoIndependentLocks() {
    Optional<SimpleLock> lock1 = provider.lock(config(name, Duration.ofMinutes(5), Duration.ZERO));
    Optional<SimpleLock> lock2 =
        provider.lock(config(name + "-2", Duration.ofMinutes(5), Duration.ZERO));
    assertThat(lock1).isNotEmpty();
    assertThat(lock2).isNotEmpty();
    lock1.get().unlock();
    lock2.get().unlock();
    assertUnlocked(name);
    assertUnlocked(name + "-2");
  }

  // Guarantee: an unlocked lock can be taken again at once.
  @Test
  void shouldLockTwiceInARow() {
    Optional<SimpleLock> lock1 = provider.lock(config(name, Duration.ofMinutes(5), Duration.ZERO));
    assertThat(lock1).isNotEmpty();
    lock1.get().unlock();
    Optional<SimpleLock> lock2 = provider.lock(config(name, Duration.ofMinutes(5), Duration.ZERO));
    assertThat(lock2).isNotEmpty();
    lock2.get().unlock();
  }

  // Guarantee: lockAtMostFor bounds the lock — never unlocked, it ends by itself and can be taken
  // again.
  @Test
  void shouldTimeout() {
    Optional<SimpleLock> lock1 = provider.lock(config(name, Duration.ofMillis(500), Duration.ZERO));
    assertThat(lock1).isNotEmpty();
    assertLocked(name);
    assertThat(LockToken.find(name)).isPresent();
    await().atMost(Duration.ofSeconds(10)).until(() -> !isLocked(name));
    assertThat(LockToken.find(name))
        .describedAs("a lock past lockAtMostFor is no longer this thread's")
        .isEmpty();
    Optional<SimpleLock> lock2 = provider.lock(config(name, Duration.ofMillis(500), Duration.ZERO));
    assertThat(lock2).isNotEmpty();
    lock2.get().unlock();
  }

  // Guarantee: lock, refuse a second, unlock — ten times in a row without a stale state in between.
  @Test
  void shouldBeAbleToLockRightAfterUnlock() {
    LockConfiguration config = config(name, Duration.ofMinutes(5), Duration.ZERO);
    for (int i = 0; i < 10; i++) {
      Optional<SimpleLock> lock = provider.lock(config);
      assertThat(provider.lock(config)).isEmpty();
      assertThat(lock).isNotEmpty();
      lock.get().unlock();
    }
  }

  // Guarantee: under contention from two instances and several threads, no two holders overlap.
  @Test
  void fuzzTestShouldPass() throws Exception {
    List<FencekeeperLockProvider> providers =
        List.of(provider, new FencekeeperLockProvider(otherInstance));
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger maxInside = new AtomicInteger();
    AtomicInteger granted = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        FencekeeperLockProvider p = providers.get(t % 2);
        workers.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < 15; i++) {
                    Optional<SimpleLock> lock =
                        p.lock(config(name, Duration.ofMinutes(1), Duration.ZERO));
                    if (lock.isPresent()) {
                      granted.incrementAndGet();
                      maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                      Thread.yield();
                      inside.decrementAndGet();
                      lock.get().unlock();
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> w : workers) {
        w.get();
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(granted.get()).isPositive();
    assertThat(maxInside.get()).isEqualTo(1);
  }

  // Guarantee: an unlock inside lockAtLeastFor keeps the lock held until lockAtLeastFor has passed.
  @Test
  void shouldLockAtLeastFor() {
    Duration atLeast = Duration.ofSeconds(2);
    long start = System.nanoTime();
    Optional<SimpleLock> lock1 = provider.lock(config(name, atLeast.multipliedBy(2), atLeast));
    assertThat(lock1).isNotEmpty();
    lock1.get().unlock();
    assertThat(provider.lock(config(name, Duration.ofMinutes(5), Duration.ZERO)))
        .describedAs("lockAtLeastFor has not passed yet")
        .isEmpty();
    await().atMost(Duration.ofSeconds(20)).until(() -> !isLocked(name));
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(atLeast);
    Optional<SimpleLock> lock3 = provider.lock(config(name, Duration.ofMinutes(5), Duration.ZERO));
    assertThat(lock3).describedAs("free once lockAtLeastFor has passed").isNotEmpty();
    lock3.get().unlock();
  }

  // ---------------------------------------------------------------------------------------------
  // ShedLock's ExtensibleLockProvider contract.

  // Guarantee: an extended lock outlives its original lockAtMostFor, and the extension unlocks it.
  @Test
  void shouldBeAbleToExtendLock() throws Exception {
    Duration original = Duration.ofSeconds(1);
    Optional<SimpleLock> lock = provider.lock(config(name, original, Duration.ZERO));
    assertThat(lock).isNotEmpty();
    Optional<SimpleLock> extended = lock.get().extend(Duration.ofSeconds(30), Duration.ZERO);
    assertThat(extended).isNotEmpty();
    Thread.sleep(original.multipliedBy(2).toMillis());
    assertLocked(name);
    extended.get().unlock();
    assertUnlocked(name);
  }

  // Guarantee: an unlocked lock cannot be extended.
  @Test
  void shouldNotBeAbleToExtendUnlockedLock() {
    Optional<SimpleLock> lock = provider.lock(config(name, Duration.ofSeconds(1), Duration.ZERO));
    assertThat(lock).isNotEmpty();
    lock.get().unlock();
    assertUnlocked(name);
    assertThatThrownBy(() -> lock.get().extend(Duration.ofSeconds(10), Duration.ZERO))
        .isInstanceOf(IllegalStateException.class);
  }

  // Guarantee: a lock past its lockAtMostFor cannot be extended back to life.
  @Test
  void shouldNotBeAbleToExtendExpiredLock() {
    Optional<SimpleLock> lock = provider.lock(config(name, Duration.ofMillis(200), Duration.ZERO));
    assertThat(lock).isNotEmpty();
    await().atMost(Duration.ofSeconds(10)).until(() -> !isLocked(name));
    assertThat(lock.get().extend(Duration.ofSeconds(10), Duration.ZERO)).isEmpty();
    assertUnlocked(name);
  }

  // Guarantee: an extension's own lockAtLeastFor holds the lock after it is unlocked.
  @Test
  void shouldBeAbleToExtendAtLeast() {
    Optional<SimpleLock> lock = provider.lock(config(name, Duration.ofSeconds(10), Duration.ZERO));
    assertThat(lock).isNotEmpty();
    Optional<SimpleLock> extended =
        lock.get().extend(Duration.ofSeconds(10), Duration.ofSeconds(9));
    assertThat(extended).isNotEmpty();
    extended.get().unlock();
    assertLocked(name);
  }

  // Guarantee: an extended lock is spent; it cannot be extended again.
  @Test
  void lockCanNotBeExtendedTwice() {
    Optional<SimpleLock> lock = provider.lock(config(name, Duration.ofSeconds(10), Duration.ZERO));
    assertThat(lock).isNotEmpty();
    assertThat(lock.get().extend(Duration.ofSeconds(10), Duration.ZERO)).isNotEmpty();
    assertThatThrownBy(() -> lock.get().extend(Duration.ofSeconds(10), Duration.ZERO))
        .isInstanceOf(IllegalStateException.class);
  }

  // Guarantee: an extended lock is spent; only the extension unlocks.
  @Test
  void lockCanNotBeUnlockedAfterExtending() {
    Optional<SimpleLock> lock = provider.lock(config(name, Duration.ofSeconds(10), Duration.ZERO));
    assertThat(lock).isNotEmpty();
    Optional<SimpleLock> extended = lock.get().extend(Duration.ofSeconds(10), Duration.ZERO);
    assertThat(extended).isNotEmpty();
    assertThatThrownBy(() -> lock.get().unlock()).isInstanceOf(IllegalStateException.class);
    extended.get().unlock();
    assertUnlocked(name);
  }

  // ---------------------------------------------------------------------------------------------
  // What fencekeeper adds.

  // Guarantee: the task ShedLock runs reads its lock's token, which is the live lease's; outside
  // it, none.
  @Test
  void runningTaskReadsItsFencingToken() throws Throwable {
    AtomicReference<LockToken> seen = new AtomicReference<>();
    AtomicReference<Result> leaseDuringTask = new AtomicReference<>();
    new DefaultLockingTaskExecutor(provider)
        .executeWithLock(
            (Runnable)
                () -> {
                  seen.set(LockToken.current());
                  leaseDuringTask.set(client.lease(name));
                },
            config(name, Duration.ofMinutes(1), Duration.ZERO));
    assertThat(seen.get().lockName()).isEqualTo(name);
    assertThat(seen.get().resource()).isEqualTo(name);
    assertThat(seen.get().token()).isPositive().isEqualTo(leaseDuringTask.get().token());
    assertThat(LockToken.find()).isEmpty();
    assertThatThrownBy(LockToken::current)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("FencekeeperLockProvider");
    assertUnlocked(name);
  }

  // Guarantee: nested locks each bind their own token; the inner one is current until it ends.
  @Test
  void nestedLocksEachBindTheirToken() throws Throwable {
    DefaultLockingTaskExecutor executor = new DefaultLockingTaskExecutor(provider);
    AtomicReference<LockToken> outer = new AtomicReference<>();
    AtomicReference<LockToken> inner = new AtomicReference<>();
    AtomicReference<LockToken> outerAgain = new AtomicReference<>();
    executor.executeWithLock(
        (Runnable)
            () -> {
              outer.set(LockToken.current());
              try {
                executor.executeWithLock(
                    (Runnable)
                        () -> {
                          inner.set(LockToken.current());
                          assertThat(LockToken.find(name)).contains(outer.get());
                        },
                    config(name + "-inner", Duration.ofMinutes(1), Duration.ZERO));
              } catch (RuntimeException e) {
                throw e;
              }
              outerAgain.set(LockToken.current());
            },
        config(name, Duration.ofMinutes(1), Duration.ZERO));
    assertThat(inner.get().resource()).isEqualTo(name + "-inner");
    assertThat(inner.get().token()).isNotEqualTo(outer.get().token());
    assertThat(outerAgain.get()).isEqualTo(outer.get());
  }

  // Guarantee: LockExtender extends the running task's lease past lockAtMostFor, keeping its token.
  @Test
  void lockExtenderExtendsTheSameLease() throws Throwable {
    AtomicReference<LockToken> before = new AtomicReference<>();
    AtomicReference<Result> afterOriginalTtl = new AtomicReference<>();
    new DefaultLockingTaskExecutor(provider)
        .executeWithLock(
            (Runnable)
                () -> {
                  before.set(LockToken.current());
                  LockExtender.extendActiveLock(Duration.ofSeconds(30), Duration.ZERO);
                  sleep(Duration.ofMillis(1500));
                  afterOriginalTtl.set(client.lease(name));
                  assertThat(LockToken.current()).isEqualTo(before.get());
                },
            config(name, Duration.ofMillis(700), Duration.ZERO));
    assertThat(afterOriginalTtl.get().live()).isTrue();
    assertThat(afterOriginalTtl.get().token()).isEqualTo(before.get().token());
    assertUnlocked(name);
  }

  // Guarantee: the seeds' story through ShedLock — a holder paused past lockAtMostFor is superseded
  // by a newer token, and its late fenced write is refused while the newer holder's value stays.
  @Test
  void aTaskPausedPastLockAtMostForIsFencedOut() {
    FencekeeperLock first =
        (FencekeeperLock)
            provider.lock(config(name, Duration.ofMillis(500), Duration.ZERO)).orElseThrow();
    await().atMost(Duration.ofSeconds(10)).until(() -> !isLocked(name));
    FencekeeperLockProvider other = new FencekeeperLockProvider(otherInstance);
    FencekeeperLock second =
        (FencekeeperLock)
            other.lock(config(name, Duration.ofMinutes(1), Duration.ZERO)).orElseThrow();
    assertThat(second.token()).isGreaterThan(first.token());
    assertThat(otherInstance.write(name, second.token(), "2026-11-29", bytes("by b")).isAccepted())
        .isTrue();
    assertThat(client.write(name, first.token(), "2026-11-29", bytes("by a")).code())
        .isEqualTo(ResultCode.STALE_TOKEN);
    assertThat(client.read(name, "2026-11-29").valueAsString()).isEqualTo("by b");
    first.unlock(); // the late unlock must not end the newer holder's lease
    assertLocked(name);
    assertThat(client.lease(name).token()).isEqualTo(second.token());
    second.unlock();
  }

  // Guarantee: with keep-alive, a running task keeps its lock past lockAtMostFor, with the same
  // token, and unlocking ends it; without it (every other test here) the lock ends at
  // lockAtMostFor.
  @Test
  void keepAliveRenewsWhileTheTaskRuns() throws Throwable {
    try (FencekeeperLockProvider keepAlive =
        FencekeeperLockProvider.builder(client).keepAlive(true).build()) {
      AtomicReference<LockToken> before = new AtomicReference<>();
      AtomicReference<Result> afterThreeLockAtMostFors = new AtomicReference<>();
      AtomicReference<Optional<LockToken>> stillCurrent = new AtomicReference<>();
      new DefaultLockingTaskExecutor(keepAlive)
          .executeWithLock(
              (Runnable)
                  () -> {
                    before.set(LockToken.current());
                    sleep(Duration.ofMillis(1800));
                    afterThreeLockAtMostFors.set(client.lease(name));
                    stillCurrent.set(LockToken.find());
                  },
              config(name, Duration.ofMillis(600), Duration.ZERO));
      assertThat(afterThreeLockAtMostFors.get().live()).isTrue();
      assertThat(afterThreeLockAtMostFors.get().token()).isEqualTo(before.get().token());
      assertThat(stillCurrent.get()).contains(before.get());
      assertUnlocked(name);
    }
  }

  // Guarantee: a kept-alive lock that the cluster ends (an operator's revoke) stops being the
  // task's lock.
  @Test
  void keepAliveNoticesALostLease() {
    try (FencekeeperLockProvider keepAlive =
        FencekeeperLockProvider.builder(client).keepAlive(true).build()) {
      // Renewed every 2 s: the loss is noticed well before the 6 s lockAtMostFor would end it
      // anyway.
      long start = System.nanoTime();
      SimpleLock lock =
          keepAlive.lock(config(name, Duration.ofSeconds(6), Duration.ZERO)).orElseThrow();
      assertThat(LockToken.find(name)).isPresent();
      assertThat(otherInstance.revoke(name, "test").code()).isEqualTo(ResultCode.REVOKED);
      await()
          .pollInSameThread()
          .atMost(Duration.ofSeconds(10))
          .until(() -> LockToken.find(name).isEmpty());
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(6));
      lock.unlock();
      assertUnlocked(name);
    }
  }

  // Guarantee: a resource prefix keeps ShedLock's names apart; the token names the prefixed
  // resource.
  @Test
  void resourcePrefixNamesTheLease() {
    FencekeeperLockProvider prefixed =
        FencekeeperLockProvider.builder(client).resourcePrefix("shedlock/").build();
    FencekeeperLock lock =
        (FencekeeperLock)
            prefixed.lock(config(name, Duration.ofMinutes(1), Duration.ZERO)).orElseThrow();
    assertThat(lock.resource()).isEqualTo("shedlock/" + name);
    assertThat(client.lease("shedlock/" + name).live()).isTrue();
    assertThat(client.lease(name).code()).isEqualTo(ResultCode.NOT_FOUND);
    lock.unlock();
  }

  // Guarantee: a lockAtMostFor the cluster cannot grant is an error naming the lock, not a silent
  // skip.
  @Test
  void anUngrantableLockAtMostForThrows() {
    assertThatThrownBy(() -> provider.lock(config(name, Duration.ofHours(5), Duration.ZERO)))
        .isInstanceOf(LockException.class)
        .hasMessageContaining(name)
        .hasMessageContaining("INVALID_ARGUMENT");
    assertThat(LockToken.find()).isEmpty();
  }

  // ---------------------------------------------------------------------------------------------

  private static LockConfiguration config(
      String name, Duration lockAtMostFor, Duration lockAtLeastFor) {
    return new LockConfiguration(ClockProvider.now(), name, lockAtMostFor, lockAtLeastFor);
  }

  private static boolean isLocked(String resource) {
    Result r = client.lease(resource);
    return r.code() == ResultCode.FOUND && r.live();
  }

  private static void assertLocked(String resource) {
    assertThat(isLocked(resource)).describedAs("%s is locked", resource).isTrue();
  }

  private static void assertUnlocked(String resource) {
    assertThat(isLocked(resource)).describedAs("%s is unlocked", resource).isFalse();
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
