package dev.fencekeeper.tools.bench;

import dev.fencekeeper.tools.bench.Workload.Step;
import dev.fencekeeper.tools.bench.Workload.Worker;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * {@code --baseline zookeeper} and {@code --baseline zookeeper-curator}: a three-server ZooKeeper
 * 3.8 ensemble from the Debian package, each server a {@code QuorumPeerMain} JVM with its data
 * under the temp dir (fsync on, the package's defaults otherwise), driven through one of two
 * fenced-lock recipes ({@link Recipe}). In both, a resource is a znode whose {@code fence} child's
 * version is the fencing token, bumped by every new holder, and whose {@code data} child is written
 * only in a {@code multi} that checks the token; the ZooKeeper session is the lease: its ephemeral
 * znodes end with it.
 */
final class ZooKeeperAnchor extends Anchor {
  static final Path JAR = Path.of("/usr/share/java/zookeeper.jar");

  /** How the bench's workers lock, fence and write on ZooKeeper. */
  enum Recipe {
    /**
     * {@code --baseline zookeeper}: the shortest correct fenced lock, one {@code multi} a step, so
     * three round trips a lock cycle ({@link MultiResource}). The figures the targets compare with.
     */
    MULTI(BenchReport.ZOOKEEPER),
    /**
     * {@code --baseline zookeeper-curator}: Curator's {@code InterProcessMutex} plus a fence, five
     * or more round trips a cycle ({@link CuratorResource}).
     */
    CURATOR(BenchReport.ZOOKEEPER_CURATOR);

    final String system;

    Recipe(String system) {
      this.system = system;
    }
  }

  /**
   * Curator's default is 60 s; servers cap it at 20 ticks (40 s). The workloads never let it lapse.
   */
  private static final int SESSION_TIMEOUT_MS = 15_000;

  private static final String ROOT = "/fencekeeper-bench";
  private static final byte[] EMPTY = new byte[0];

  private final Recipe recipe;
  private final List<ZooKeeper> clients = new ArrayList<>();
  private final AtomicInteger nextClient = new AtomicInteger();
  private final List<Integer> clientPorts = new ArrayList<>();
  private String connectString;

  ZooKeeperAnchor(Path dir, Recipe recipe) {
    super(dir);
    this.recipe = recipe;
  }

  @Override
  String system() {
    return recipe.system;
  }

  @Override
  boolean covers(Workload workload) {
    return workload == Workload.W1
        || workload == Workload.W2
        || workload == Workload.W3
        || workload == Workload.W6
        // A linearizable read is the same sync + getData whatever the lock recipe: measured once.
        || (workload == Workload.W4 && recipe == Recipe.MULTI);
  }

  @Override
  void startMembers() throws IOException {
    int[] ports = freePorts(9);
    List<String> servers = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      servers.add("server." + i + "=127.0.0.1:" + ports[3 + i - 1] + ":" + ports[6 + i - 1]);
      clientPorts.add(ports[i - 1]);
    }
    connectString =
        clientPorts.stream().map(p -> "127.0.0.1:" + p).collect(Collectors.joining(","));
    for (int i = 1; i <= 3; i++) {
      Path data = Files.createDirectories(dir.resolve("zk" + i));
      Files.writeString(data.resolve("myid"), i + "\n");
      // The package's zoo.cfg (tick 2 s, initLimit 10, syncLimit 5, fsync on); the admin HTTP
      // server off (it would take port 8080 on every server) and the one four-letter command the
      // bench asks: srvr (who leads).
      List<String> cfg =
          new ArrayList<>(
              List.of(
                  "tickTime=2000",
                  "initLimit=10",
                  "syncLimit=5",
                  "dataDir=" + data,
                  "clientPort=" + clientPorts.get(i - 1),
                  "clientPortAddress=127.0.0.1",
                  "admin.enableServer=false",
                  "4lw.commands.whitelist=srvr",
                  "maxClientCnxns=0"));
      cfg.addAll(servers);
      Path file = dir.resolve("zoo" + i + ".cfg");
      Files.write(file, cfg);
      // zkServer.sh's heap (ZK_SERVER_HEAP, 1000 MB); the jar's manifest names the package's other
      // jars.
      launch(
          "zk" + i,
          List.of(
              java(),
              "-Xmx1000m",
              "-cp",
              JAR.toString(),
              "org.apache.zookeeper.server.quorum.QuorumPeerMain",
              file.toString()));
    }
  }

  @Override
  void connect(int count) throws IOException, InterruptedException {
    for (int i = 0; i < count; i++) {
      CountDownLatch connected = new CountDownLatch(1);
      ZooKeeper zk =
          new ZooKeeper(
              connectString,
              SESSION_TIMEOUT_MS,
              event -> {
                if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                  connected.countDown();
                }
              });
      clients.add(zk);
      if (!connected.await(READY_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
        throw new IllegalStateException(
            "no ZooKeeper server accepted a session within "
                + READY_TIMEOUT.toSeconds()
                + " s"
                + deadMember().map(d -> ": " + d).orElse(""));
      }
    }
  }

  @Override
  void awaitWritable(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      try {
        createIfAbsent(clients.get(0), ROOT);
        return;
      } catch (IllegalStateException e) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "the ZooKeeper ensemble did not commit a write within "
                  + timeout
                  + ": "
                  + e.getMessage()
                  + deadMember().map(d -> "; " + d).orElse(""));
        }
        Thread.sleep(200);
      }
    }
  }

  @Override
  Optional<String> leader() {
    for (String id : memberIds()) {
      if ("leader".equals(mode(id))) {
        return Optional.of(id);
      }
    }
    return Optional.empty();
  }

  @Override
  boolean serving(String id) {
    String mode = mode(id);
    return "leader".equals(mode) || "follower".equals(mode);
  }

  /** The server's "Mode:" line of the srvr four-letter command, or null when it does not answer. */
  private String mode(String id) {
    int port = clientPorts.get(Integer.parseInt(id.substring(2)) - 1);
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
      s.setSoTimeout(1000);
      OutputStream out = s.getOutputStream();
      out.write("srvr".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      BufferedReader in =
          new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
      for (String line; (line = in.readLine()) != null; ) {
        if (line.startsWith("Mode: ")) {
          return line.substring(6).trim().toLowerCase(Locale.ROOT);
        }
      }
      return null;
    } catch (IOException e) {
      return null;
    }
  }

  /** The first client's session, on which a test drives a recipe's steps one by one. */
  ZooKeeper session() {
    return clients.get(0);
  }

  @Override
  void closeClients() {
    for (ZooKeeper zk : clients) {
      try {
        zk.close(2000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    clients.clear();
  }

  @Override
  Worker worker(Workload workload, String runId, int index, int concurrency, Duration leaseTtl) {
    ZooKeeper zk = clients.get(nextClient.getAndIncrement() % clients.size());
    String base =
        ROOT + "/" + runId + "-" + workload.name().toLowerCase(Locale.ROOT) + "-c" + concurrency;
    return switch (workload) {
      case W1 -> AnchorWorkers.lockChurn(resource(zk, base + "-" + index));
      case W2 -> AnchorWorkers.fencedWrites(resource(zk, base + "-" + index));
      case W3 -> AnchorWorkers.staleReplay(resource(zk, base + "-" + index));
      case W4 -> reads(zk, base + "-" + index);
      case W6 ->
          AnchorWorkers.contended(
              resource(zk, base + "-" + index % Math.max(1, (concurrency + 15) / 16)));
      default -> throw new IllegalArgumentException("no ZooKeeper equivalent of " + workload);
    };
  }

  private AnchorWorkers.Lock<?> resource(ZooKeeper zk, String path) {
    return recipe == Recipe.MULTI ? new MultiResource(zk, path) : new CuratorResource(zk, path);
  }

  @Override
  HandOff.Contender contender(String runId, int waiters) {
    ZooKeeper zk = clients.get(nextClient.getAndIncrement() % clients.size());
    return contender(resource(zk, ROOT + "/" + runId + "-handoff-c" + waiters));
  }

  private static <H> HandOff.Contender contender(AnchorWorkers.Lock<H> resource) {
    resource.open();
    return new HandOff.Contender() {
      @Override
      public Object acquire() throws Exception {
        return resource.acquire(Workload.CONTENDED_WAIT).orElse(null);
      }

      @Override
      @SuppressWarnings("unchecked") // only ever given what acquire returned
      public boolean write(Object held) {
        return resource.write((H) held).kind() == Step.Kind.OK;
      }

      @Override
      @SuppressWarnings("unchecked")
      public void release(Object held) {
        Step released = resource.release((H) held);
        if (released.kind() != Step.Kind.OK) {
          throw new IllegalStateException(released.reason());
        }
      }
    };
  }

  /**
   * W4: a linearizable read of the worker's own znode, {@code sync} then {@code getData}. The two
   * are sent back to back: the session's FIFO order has the server answer the read after the sync
   * has brought it up to the leader's latest commit.
   */
  static Worker reads(ZooKeeper zk, String path) {
    return new Worker() {
      @Override
      public void setUp() {
        createIfAbsent(zk, path);
      }

      @Override
      public Step step() {
        return read(zk, path);
      }
    };
  }

  /** One linearizable read of {@code path}: OK, or a failure naming the code. */
  static Step read(ZooKeeper zk, String path) {
    java.util.concurrent.CompletableFuture<Integer> synced =
        new java.util.concurrent.CompletableFuture<>();
    zk.sync(path, (rc, p, ctx) -> synced.complete(rc), null);
    try {
      zk.getData(path, false, null);
      int rc = synced.get(SESSION_TIMEOUT_MS, TimeUnit.MILLISECONDS);
      return rc == KeeperException.Code.OK.intValue()
          ? Step.OK
          : Step.failed("sync " + KeeperException.Code.get(rc));
    } catch (KeeperException e) {
      return Step.failed("read " + e.code());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Step.failed("interrupted");
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      return Step.failed("sync " + e.getClass().getSimpleName());
    }
  }

  /** A write refused for the lock znode or the fence version: the stale-holder case. */
  static final Step REFUSED = Step.failed("refused: lock znode gone or fence version moved on");

  /** A lock held through {@link MultiResource}: the fence version its acquire set, the token. */
  record Token(int version) {}

  /**
   * The shortest correct fenced lock on ZooKeeper, one {@code multi} (one round trip) a step; a
   * resource is a znode with children {@code lock}, {@code fence} and {@code data}:
   *
   * <ul>
   *   <li>acquire: {@code multi(create(lock, EPHEMERAL), setData(fence, any version))}; the token
   *       is the fence's new version, {@code NODEEXISTS} means held;
   *   <li>fenced write: {@code multi(check(fence, token), check(lock, version 0), setData(data))};
   *   <li>release: {@code multi(check(fence, token), delete(lock))}.
   * </ul>
   *
   * Every acquire bumps the fence in the transaction that creates the lock znode, so the fence's
   * version names the holder: a holder that has been succeeded has its write and its release
   * refused ({@code BADVERSION}); one whose lock znode is gone with its session, nobody holding
   * since, has its write refused by the lock check ({@code NONODE}). A waiter (W6) watches the lock
   * znode and tries again when it goes, so every waiter wakes at each release: the herd Curator's
   * recipe avoids with two more round trips a cycle.
   */
  static final class MultiResource implements AnchorWorkers.Lock<Token> {
    final ZooKeeper zk;
    final String path;
    private final String lock;
    private final String fence;
    private final String data;

    MultiResource(ZooKeeper zk, String path) {
      this.zk = zk;
      this.path = path;
      this.lock = path + "/lock";
      this.fence = path + "/fence";
      this.data = path + "/data";
    }

    /** Creates the resource's persistent znodes when absent (several workers of W6 share one). */
    @Override
    public void open() {
      createIfAbsent(zk, path);
      createIfAbsent(zk, fence);
      createIfAbsent(zk, data);
    }

    /**
     * Takes the lock: with {@code wait} zero only when free (empty otherwise), else trying again
     * each time the lock znode goes, for at most {@code wait}. Throws on a ZooKeeper error.
     */
    @Override
    public Optional<Token> acquire(Duration wait) throws KeeperException, InterruptedException {
      long deadline = System.nanoTime() + wait.toNanos();
      while (true) {
        try {
          List<OpResult> results =
              zk.multi(
                  List.of(
                      Op.create(lock, EMPTY, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL),
                      Op.setData(fence, EMPTY, -1)));
          return Optional.of(
              new Token(((OpResult.SetDataResult) results.get(1)).getStat().getVersion()));
        } catch (KeeperException.NodeExistsException held) {
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            return Optional.empty();
          }
          CountDownLatch changed = new CountDownLatch(1);
          if (zk.exists(lock, event -> changed.countDown()) != null
              && !changed.await(left, TimeUnit.NANOSECONDS)) {
            return Optional.empty();
          }
        }
      }
    }

    @Override
    public Token acquireOrThrow() {
      return ZooKeeperAnchor.acquireOrThrow(this, path);
    }

    /**
     * The fenced write: OK when applied; {@link #REFUSED} when the fence has moved on or the lock
     * znode is gone; a failure naming the code otherwise.
     */
    @Override
    public Step write(Token held) {
      return fenced(
          "write",
          Op.check(fence, held.version()),
          Op.check(lock, 0),
          Op.setData(data, Workload.VALUE, -1));
    }

    /** The release, refused like a write when the fence has moved on: a stale holder's is. */
    @Override
    public Step release(Token held) {
      return fenced("release", Op.check(fence, held.version()), Op.delete(lock, -1));
    }

    private Step fenced(String what, Op... ops) {
      try {
        zk.multi(List.of(ops));
        return Step.OK;
      } catch (KeeperException e) {
        return refusedOrFailed(what, e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return Step.failed("interrupted");
      }
    }

    @Override
    public Step refusal() {
      return REFUSED;
    }

    @Override
    public String describe(Exception e) {
      return e instanceof KeeperException k ? k.code().toString() : e.toString();
    }
  }

  /**
   * A held lock through {@link CuratorResource}: the holder's sequential znode and the fence
   * version it set, the token.
   */
  record Held(String lockNode, int token) {}

  /**
   * Curator's {@code InterProcessMutex} plus a fence, as ZooKeeper users commonly run it:
   *
   * <ul>
   *   <li>{@code locks/}: each contender creates an ephemeral sequential child; the lowest holds
   *       the lock, the others watch their predecessor (no herd on release);
   *   <li>{@code fence}: the new holder bumps its version; that version is the fencing token;
   *   <li>{@code data}: written as {@code multi(check(my lock znode), check(fence, token),
   *       setData(data))}, so a holder whose lock znode is gone or whose token is no longer the
   *       fence's version is refused.
   * </ul>
   *
   * An uncontended cycle takes five round trips: create, getChildren, setData of the fence, the
   * write, the delete.
   */
  static final class CuratorResource implements AnchorWorkers.Lock<Held> {
    final ZooKeeper zk;
    final String path;

    CuratorResource(ZooKeeper zk, String path) {
      this.zk = zk;
      this.path = path;
    }

    /** Creates the resource's znodes when absent (several workers of W6 share one). */
    @Override
    public void open() {
      createIfAbsent(zk, path);
      createIfAbsent(zk, path + "/locks");
      createIfAbsent(zk, path + "/fence");
      createIfAbsent(zk, path + "/data");
    }

    /**
     * Takes the lock: with {@code wait} zero only when no one holds or queues (empty otherwise),
     * else in line, watching the predecessor, for at most {@code wait}. Throws on a ZooKeeper
     * error.
     */
    @Override
    public Optional<Held> acquire(Duration wait) throws KeeperException, InterruptedException {
      String mine =
          zk.create(
              path + "/locks/lock-",
              EMPTY,
              ZooDefs.Ids.OPEN_ACL_UNSAFE,
              CreateMode.EPHEMERAL_SEQUENTIAL);
      String name = mine.substring(mine.lastIndexOf('/') + 1);
      long deadline = System.nanoTime() + wait.toNanos();
      boolean granted = false;
      try {
        while (true) {
          List<String> children = zk.getChildren(path + "/locks", false);
          Collections.sort(children); // same prefix, ten-digit sequence numbers
          int at = children.indexOf(name);
          if (at < 0) {
            throw new IllegalStateException(
                "own lock znode " + mine + " vanished (session expired?)");
          }
          if (at == 0) {
            break;
          }
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            return Optional.empty();
          }
          CountDownLatch gone = new CountDownLatch(1);
          Stat predecessor =
              zk.exists(path + "/locks/" + children.get(at - 1), event -> gone.countDown());
          if (predecessor != null && !gone.await(left, TimeUnit.NANOSECONDS)) {
            return Optional.empty();
          }
        }
        int token = zk.setData(path + "/fence", EMPTY, -1).getVersion();
        granted = true;
        return Optional.of(new Held(mine, token));
      } finally {
        if (!granted) {
          zk.delete(mine, -1);
        }
      }
    }

    @Override
    public Held acquireOrThrow() {
      return ZooKeeperAnchor.acquireOrThrow(this, path);
    }

    /**
     * The fenced write. OK when applied; {@link #REFUSED} when ZooKeeper refused it for the lock
     * znode or the fence version (the stale-holder case); a failure naming the code otherwise.
     */
    @Override
    public Step write(Held held) {
      try {
        zk.multi(
            List.of(
                Op.check(held.lockNode(), -1),
                Op.check(path + "/fence", held.token()),
                Op.setData(path + "/data", Workload.VALUE, -1)));
        return Step.OK;
      } catch (KeeperException e) {
        return refusedOrFailed("write", e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return Step.failed("interrupted");
      }
    }

    @Override
    public Step release(Held held) {
      try {
        zk.delete(held.lockNode(), -1);
        return Step.OK;
      } catch (KeeperException e) {
        return Step.failed("release " + e.code());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return Step.failed("interrupted");
      }
    }

    @Override
    public Step refusal() {
      return REFUSED;
    }

    @Override
    public String describe(Exception e) {
      return e instanceof KeeperException k ? k.code().toString() : e.toString();
    }
  }

  /**
   * A fenced write's or release's refusal for the token or the lock znode ({@code NONODE}, {@code
   * BADVERSION}): {@link #REFUSED}; any other code a failure naming it.
   */
  static Step refusedOrFailed(String what, KeeperException e) {
    return e.code() == KeeperException.Code.NONODE || e.code() == KeeperException.Code.BADVERSION
        ? REFUSED
        : Step.failed(what + " " + e.code());
  }

  /** {@code lock}'s acquire with no wait, or an IllegalStateException saying why not. */
  static <H> H acquireOrThrow(AnchorWorkers.Lock<H> lock, String path) {
    try {
      return lock.acquire(Duration.ZERO)
          .orElseThrow(() -> new IllegalStateException("acquire HELD for " + path));
    } catch (KeeperException e) {
      throw new IllegalStateException("acquire " + e.code() + " for " + path, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("acquire interrupted for " + path, e);
    } catch (Exception e) {
      throw new IllegalStateException("acquire " + e + " for " + path, e);
    }
  }

  /** Creates a persistent znode unless it exists; its parent must exist. */
  static void createIfAbsent(ZooKeeper zk, String path) {
    try {
      zk.create(path, EMPTY, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
    } catch (KeeperException.NodeExistsException e) {
      // created by another worker, or an earlier run
    } catch (KeeperException e) {
      throw new IllegalStateException("create " + e.code() + " for " + path, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("create interrupted for " + path, e);
    }
  }
}
