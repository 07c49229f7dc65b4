package dev.fencekeeper.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencekeeper.client.FencingClient;
import dev.fencekeeper.client.Result;
import dev.fencekeeper.client.ResultCode;
import dev.fencekeeper.testing.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A grant that arrives after its own lockAtMostFor, made slow by taking the cluster's quorum away.
 */
@Timeout(120)
class SlowGrantClusterTest {
  @TempDir Path dataDir;
  TestCluster cluster;

  @AfterEach
  void stopCluster() {
    cluster.close();
  }

  // Guarantee: a lock granted only after its lockAtMostFor has passed by the caller's clock is
  // given back at once and the task is not run: the cluster would let it run for the whole TTL
  // after the late grant, while by the caller's clock the lock is already over.
  @Test
  void aGrantArrivingAfterLockAtMostForIsReleasedNotRun() throws Exception {
    cluster = TestCluster.start(dataDir);
    String leader = cluster.awaitLeader();
    FencingClient client = cluster.newClient("slow");
    FencekeeperLockProvider provider = new FencekeeperLockProvider(client);
    client.acquire("warm-up", Duration.ofSeconds(5)).close(); // connect before the quorum goes

    List<String> followers =
        cluster.running().keySet().stream().filter(id -> !id.equals(leader)).toList();
    followers.forEach(cluster::stopNode);
    Duration lockAtMostFor = Duration.ofSeconds(3);
    CompletableFuture<Optional<SimpleLock>> lock =
        CompletableFuture.supplyAsync(
            () ->
                provider.lock(
                    new LockConfiguration(
                        ClockProvider.now(), "slow-grant", lockAtMostFor, Duration.ZERO)));
    Thread.sleep(lockAtMostFor.toMillis() + 1000);
    assertThat(lock).describedAs("no quorum, no grant yet").isNotDone();
    followers.forEach(cluster::startNode);

    Optional<SimpleLock> granted = lock.get();
    Result after = client.lease("slow-grant");
    assertThat(granted).describedAs("a grant that came too late").isEmpty();
    assertThat(after.code()).isEqualTo(ResultCode.FOUND);
    assertThat(after.currentToken()).describedAs("it was granted").isPositive();
    assertThat(after.live()).describedAs("and released, not left to run out its TTL").isFalse();
    assertThat(LockToken.find()).isEmpty();
  }
}
