package dev.fencekeeper.tools.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.fencekeeper.tools.bench.Workload.Step;
import dev.fencekeeper.tools.bench.ZooKeeperAnchor.CuratorResource;
import dev.fencekeeper.tools.bench.ZooKeeperAnchor.Held;
import dev.fencekeeper.tools.bench.ZooKeeperAnchor.MultiResource;
import dev.fencekeeper.tools.bench.ZooKeeperAnchor.Token;
import java.nio.file.Files;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The ZooKeeper anchor's lock recipes on the three-server ensemble the bench starts from the Debian
 * package (these tests are skipped where it is not installed: `apt-get install zookeeper`): the
 * bench may only compare fencekeeper with a recipe that fences, so a succeeded holder's steps must
 * be refused there as they are on fencekeeper.
 */
class ZooKeeperRecipeTest {
  private static ZooKeeperAnchor anchor;
  private static ZooKeeper zk;
  private static String root;

  @BeforeAll
  static void startEnsemble() throws Exception {
    assumeTrue(
        Files.isRegularFile(ZooKeeperAnchor.JAR),
        "ZooKeeper 3.8 is not installed (" + ZooKeeperAnchor.JAR + ")");
    anchor = (ZooKeeperAnchor) Anchor.Kind.ZOOKEEPER.start(1);
    zk = anchor.session();
    root = "/recipe-test-" + Integer.toHexString(ThreadLocalRandom.current().nextInt());
    ZooKeeperAnchor.createIfAbsent(zk, root);
  }

  @AfterAll
  static void stopEnsemble() {
    if (anchor != null) {
      anchor.close();
    }
  }

  // Guarantee: the one-multi recipe grants one holder at a time, and once a holder is succeeded
  // its write and its release are refused (the release leaving the new holder's lock in place),
  // while the new holder's write goes through.
  @Test
  void multiRecipeRefusesASucceededHolder() throws Exception {
    MultiResource r = new MultiResource(zk, root + "/multi");
    r.open();
    Token first = r.acquireOrThrow();
    assertThat(r.acquire(Duration.ZERO)).as("a second acquire while held").isEmpty();
    assertThat(r.write(first)).isEqualTo(Step.OK);
    assertThat(r.release(first)).isEqualTo(Step.OK);

    Token second = r.acquireOrThrow();
    assertThat(second.version()).isGreaterThan(first.version());
    assertThat(r.write(first)).as("the succeeded holder's write").isSameAs(r.refusal());
    assertThat(r.release(first)).as("the succeeded holder's release").isSameAs(r.refusal());
    assertThat(r.acquire(Duration.ZERO)).as("still held by the second holder").isEmpty();
    assertThat(r.write(second)).isEqualTo(Step.OK);
    assertThat(r.release(second)).isEqualTo(Step.OK);
  }

  // Guarantee: a holder whose lock znode is gone (as when its session expires) has its write
  // refused even though nobody took the lock since, so its token is still the fence's version.
  @Test
  void multiRecipeRefusesAWriteWhoseLockZnodeIsGone() throws Exception {
    MultiResource r = new MultiResource(zk, root + "/expired");
    r.open();
    Token held = r.acquireOrThrow();
    zk.delete(root + "/expired/lock", -1);
    assertThat(r.write(held)).isSameAs(r.refusal());
  }

  // Guarantee: a waiter in line is granted when the holder releases.
  @Test
  void multiRecipeWaiterIsGrantedOnRelease() throws Exception {
    MultiResource r = new MultiResource(zk, root + "/queue");
    r.open();
    Token held = r.acquireOrThrow();
    var waiter =
        java.util.concurrent.CompletableFuture.supplyAsync(
            () -> {
              try {
                return r.acquire(Duration.ofSeconds(30));
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    Thread.sleep(200);
    assertThat(waiter).isNotDone();
    assertThat(r.release(held)).isEqualTo(Step.OK);
    Token next = waiter.get(30, java.util.concurrent.TimeUnit.SECONDS).orElseThrow();
    assertThat(next.version()).isGreaterThan(held.version());
    assertThat(r.release(next)).isEqualTo(Step.OK);
  }

  // Guarantee: the Curator recipe refuses a succeeded holder's write too.
  @Test
  void curatorRecipeRefusesASucceededHolder() {
    CuratorResource r = new CuratorResource(zk, root + "/curator");
    r.open();
    Held first = r.acquireOrThrow();
    assertThat(r.release(first)).isEqualTo(Step.OK);
    Held second = r.acquireOrThrow();
    assertThat(r.write(first)).isSameAs(r.refusal());
    assertThat(r.write(second)).isEqualTo(Step.OK);
    assertThat(r.release(second)).isEqualTo(Step.OK);
  }

  // Guarantee: W4's sync + getData answers OK on a znode that exists and names the code on one
  // that does not.
  @Test
  void linearizableReadAnswers() {
    ZooKeeperAnchor.createIfAbsent(zk, root + "/read");
    assertThat(ZooKeeperAnchor.read(zk, root + "/read")).isEqualTo(Step.OK);
    assertThat(ZooKeeperAnchor.read(zk, root + "/absent").reason()).isEqualTo("read NONODE");
  }
}
