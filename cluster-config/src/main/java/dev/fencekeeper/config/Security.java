package dev.fencekeeper.config;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;

/**
 * Who may talk to a cluster and how much it accepts at once (docs/security.md).
 *
 * @param tls this process's certificate, key and trusted CA; null means plaintext, and then every
 *     caller may do everything
 * @param admins certificate CNs allowed to change membership, move the leader, take snapshots, back
 *     up and revoke ({@code authz.admins})
 * @param nodes certificate CNs allowed to speak the server-to-server protocol ({@code authz.nodes})
 * @param maxPendingWrites commands the leader holds between accepting and applying them; beyond
 *     that it answers OVERLOADED ({@code overload.pending-writes.max})
 * @param maxPendingReads reads (linearizable, stale and watches) a node holds between receiving and
 *     answering them; beyond that it answers OVERLOADED ({@code overload.pending-reads.max})
 */
public record Security(
    TlsFiles tls,
    Set<String> admins,
    Set<String> nodes,
    int maxPendingWrites,
    int maxPendingReads) {
  /** Ratis's own default for {@code raft.server.write.element-limit}. */
  public static final int DEFAULT_MAX_PENDING_WRITES = 4096;

  /**
   * Generous: a read is answered from memory within a read-index round, so this only stops floods.
   */
  public static final int DEFAULT_MAX_PENDING_READS = 4096;

  public static final String DEFAULT_NODE_CN = "fencekeeper-node";

  public Security {
    admins = Set.copyOf(admins);
    nodes = Set.copyOf(nodes);
    if (maxPendingWrites <= 0) {
      throw new ConfigException(
          Keys.OVERLOAD_PENDING_WRITES_MAX + ": '" + maxPendingWrites + "' must be positive");
    }
    if (maxPendingReads <= 0) {
      throw new ConfigException(
          Keys.OVERLOAD_PENDING_READS_MAX + ": '" + maxPendingReads + "' must be positive");
    }
    for (String cn : admins) {
      checkCn(Keys.AUTHZ_ADMINS, cn);
    }
    for (String cn : nodes) {
      checkCn(Keys.AUTHZ_NODES, cn);
    }
  }

  /**
   * Plaintext, no admins named (none needed), the default pending-write and pending-read bounds.
   */
  public static Security none() {
    return new Security(
        null,
        Set.of(),
        Set.of(DEFAULT_NODE_CN),
        DEFAULT_MAX_PENDING_WRITES,
        DEFAULT_MAX_PENDING_READS);
  }

  public boolean tlsEnabled() {
    return tls != null;
  }

  /** Without TLS there are no identities, so everything is allowed. */
  public boolean isAdmin(String caller) {
    return !tlsEnabled() || admins.contains(caller);
  }

  public boolean isNode(String caller) {
    return !tlsEnabled() || nodes.contains(caller);
  }

  public Security withTls(TlsFiles files) {
    return new Security(files, admins, nodes, maxPendingWrites, maxPendingReads);
  }

  public Security withAdmins(Set<String> cns) {
    return new Security(tls, cns, nodes, maxPendingWrites, maxPendingReads);
  }

  public Security withMaxPendingWrites(int max) {
    return new Security(tls, admins, nodes, max, maxPendingReads);
  }

  public Security withMaxPendingReads(int max) {
    return new Security(tls, admins, nodes, maxPendingWrites, max);
  }

  /**
   * Ratis parameters carrying the mutual-TLS configuration for every channel (server-to-server,
   * client, admin); empty parameters without TLS.
   */
  public Parameters ratisParameters() {
    Parameters p = new Parameters();
    if (tls != null) {
      // mutual = true: a node requires a certificate from every caller, and a client presents its
      // own.
      GrpcConfigKeys.TLS.setConf(
          p,
          new GrpcTlsConfig(tls.key().toFile(), tls.cert().toFile(), tls.trust().toFile(), true));
    }
    return p;
  }

  String join(Set<String> cns) {
    return String.join(",", new TreeSet<>(cns));
  }

  static Set<String> parseCns(String key, String text) {
    Set<String> cns = new TreeSet<>();
    for (String part : text.split(",", -1)) {
      String cn = part.trim();
      if (cn.isEmpty()) {
        throw new ConfigException(key + ": '" + text + "' has an empty entry");
      }
      cns.add(checkCn(key, cn));
    }
    return cns;
  }

  private static String checkCn(String key, String cn) {
    if (cn.isEmpty()
        || cn.length() > 64
        || cn.chars().anyMatch(c -> c < 0x20 || c == 0x7f || c == ',')) {
      throw new ConfigException(
          key + ": '" + cn + "' is not a certificate CN (1..64 printable characters, no comma)");
    }
    return cn;
  }

  /**
   * PEM files: this process's certificate chain, its PKCS#8 private key, and the CA certificates it
   * trusts for its peers ({@code tls.cert}, {@code tls.key}, {@code tls.trust}).
   */
  public record TlsFiles(Path cert, Path key, Path trust) {
    public TlsFiles {
      readable(Keys.TLS_CERT, cert);
      readable(Keys.TLS_KEY, key);
      readable(Keys.TLS_TRUST, trust);
    }

    /**
     * {@code <dir>/<name>.crt}, {@code <dir>/<name>.key} and {@code <dir>/ca.crt}, as {@code
     * fencekeeper certs} writes them.
     */
    public static TlsFiles inDirectory(Path dir, String name) {
      return new TlsFiles(
          dir.resolve(name + ".crt"), dir.resolve(name + ".key"), dir.resolve("ca.crt"));
    }

    private static void readable(String key, Path file) {
      if (file == null) {
        throw new ConfigException(key + ": missing; tls.cert, tls.key and tls.trust go together");
      }
      if (!Files.isReadable(file)) {
        throw new ConfigException(key + ": '" + file + "' is not a readable file");
      }
    }
  }
}
