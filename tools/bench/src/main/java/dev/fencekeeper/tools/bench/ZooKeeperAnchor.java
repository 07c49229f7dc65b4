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
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * {@code --baseline zookeeper}: a three-server ZooKeeper 3.8 ensemble from the Debian package, each
 * server a {@code QuorumPeerMain} JVM with its data under the temp dir (fsync on, the package's
 * defaults otherwise), and the lock recipe ZooKeeper users run (Curator's {@code
 * InterProcessMutex}): a resource is a znode with
 *
 * <ul>
 *   <li>{@code locks/}: each contender creates an ephemeral sequential child; the lowest holds the
 *       lock, the others watch their predecessor (no herd on release);
 *   <li>{@code fence}: the new holder bumps its version; that version is the fencing token;
 *   <li>{@code data}: written as {@code multi(check(my lock znode), check(fence, token),
 *       setData(data))}, so a holder whose lock znode is gone or whose token is no longer the
 *       fence's version is refused.
 * </ul>
 *
 * The ZooKeeper session is the lease: its ephemeral znodes end with it.
 */
final class ZooKeeperAnchor extends Anchor {
  static final Path JAR = Path.of("/usr/share/java/zookeeper.jar");

  /**
   * Curator's default is 60 s; servers cap it at 20 ticks (40 s). The workloads never let it lapse.
   */
  private static final int SESSION_TIMEOUT_MS = 15_000;

  private static final String ROOT = "/fencekeeper-bench";
  private static final byte[] EMPTY = new byte[0];

  private final List<ZooKeeper> clients = new ArrayList<>();
  private final AtomicInteger nextClient = new AtomicInteger();
  private final List<Integer> clientPorts = new ArrayList<>();
  private String connectString;

  ZooKeeperAnchor(Path dir) {
    super(dir);
  }

  @Override
  String system() {
    return BenchReport.ZOOKEEPER;
  }

  @Override
  boolean covers(Workload workload) {
    return workload == Workload.W1
        || workload == Workload.W2
        || workload == Workload.W3
        || workload == Workload.W6;
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
      if (!connected.await(60, TimeUnit.SECONDS)) {
        throw new IllegalStateException(
            "no ZooKeeper server accepted a session within 60 s"
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
      case W1 -> AnchorWorkers.lockChurn(new Resource(zk, base + "-" + index));
      case W2 -> AnchorWorkers.fencedWrites(new Resource(zk, base + "-" + index));
      case W3 -> AnchorWorkers.staleReplay(new Resource(zk, base + "-" + index));
      case W6 ->
          AnchorWorkers.contended(
              new Resource(zk, base + "-" + index % Math.max(1, (concurrency + 15) / 16)));
      default -> throw new IllegalArgumentException("no ZooKeeper equivalent of " + workload);
    };
  }

  @Override
  HandOff.Contender contender(String runId, int waiters) {
    ZooKeeper zk = clients.get(nextClient.getAndIncrement() % clients.size());
    Resource resource = new Resource(zk, ROOT + "/" + runId + "-handoff-c" + waiters);
    resource.open();
    return new HandOff.Contender() {
      @Override
      public Object acquire() throws KeeperException, InterruptedException {
        return resource.acquire(Workload.CONTENDED_WAIT).orElse(null);
      }

      @Override
      public boolean write(Object held) {
        return resource.write((Held) held).kind() == Step.Kind.OK;
      }

      @Override
      public void release(Object held) {
        Step released = resource.release((Held) held);
        if (released.kind() != Step.Kind.OK) {
          throw new IllegalStateException(released.reason());
        }
      }
    };
  }

  /** A write refused for the lock znode or the fence version: the stale-holder case. */
  static final Step REFUSED = Step.failed("refused: lock znode gone or fence version moved on");

  /** A held lock: the holder's sequential znode and the fence version it set, the token. */
  record Held(String lockNode, int token) {}

  /** One lockable resource: its znodes and the recipe's three operations. */
  static final class Resource implements AnchorWorkers.Lock<Held> {
    final ZooKeeper zk;
    final String path;

    Resource(ZooKeeper zk, String path) {
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
      try {
        return acquire(Duration.ZERO)
            .orElseThrow(() -> new IllegalStateException("acquire HELD for " + path));
      } catch (KeeperException e) {
        throw new IllegalStateException("acquire " + e.code() + " for " + path, e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("acquire interrupted for " + path, e);
      }
    }

    /**
     * The fenced write. OK when applied; {@link Refused#DEFINITE} when ZooKeeper refused it for the
     * lock znode or the fence version (the stale-holder case); a failure naming the code otherwise.
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
        return e.code() == KeeperException.Code.NONODE
                || e.code() == KeeperException.Code.BADVERSION
            ? REFUSED
            : Step.failed("write " + e.code());
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
