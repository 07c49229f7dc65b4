package dev.fencekeeper.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.TreeSet;

/**
 * Who may talk to a cluster (docs/security.md). How much a node accepts at once is {@link
 * Overload}.
 *
 * @param tls this process's certificate, key and trusted CA; null means plaintext, and then every
 *     caller may do everything
 * @param admins certificate CNs allowed to change membership, move the leader, take snapshots, back
 *     up and revoke ({@code authz.admins})
 * @param nodes certificate CNs allowed to speak the server-to-server protocol ({@code authz.nodes})
 */
public record Security(TlsFiles tls, Set<String> admins, Set<String> nodes) {

  public static final String DEFAULT_NODE_CN = "fencekeeper-node";

  public Security {
    admins = Set.copyOf(Keys.AUTHZ_ADMINS.check(admins));
    nodes = Set.copyOf(Keys.AUTHZ_NODES.check(nodes));
  }

  /** Plaintext, no admins named (none needed), the default node CN. */
  public static Security none() {
    return new Security(null, Keys.AUTHZ_ADMINS.defaultValue(), Keys.AUTHZ_NODES.defaultValue());
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
    return new Security(files, admins, nodes);
  }

  public Security withAdmins(Set<String> cns) {
    return new Security(tls, cns, nodes);
  }

  static Set<String> parseCns(String key, String text) {
    Set<String> cns = new TreeSet<>();
    for (String part : text.split(",", -1)) {
      String cn = part.trim();
      if (cn.isEmpty()) {
        throw new ConfigException(key + ": '" + text + "' has an empty entry");
      }
      if (!isCn(cn)) {
        throw new ConfigException(key + ": '" + cn + "' " + NOT_A_CN);
      }
      cns.add(cn);
    }
    return cns;
  }

  /** Null if every CN in {@code cns} is usable, else what is wrong with the first that is not. */
  static String badCnProblem(Set<String> cns) {
    for (String cn : new TreeSet<>(cns)) {
      if (!isCn(cn)) {
        return "has '" + cn + "', which " + NOT_A_CN;
      }
    }
    return null;
  }

  private static final String NOT_A_CN =
      "is not a certificate CN (1..64 printable characters, no comma)";

  private static boolean isCn(String cn) {
    return cn != null
        && !cn.isEmpty()
        && cn.length() <= 64
        && cn.chars().noneMatch(c -> c < 0x20 || c == 0x7f || c == ',');
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

    private static void readable(ConfigKey<Path> key, Path file) {
      if (file == null) {
        throw new ConfigException(key + ": missing; tls.cert, tls.key and tls.trust go together");
      }
      if (!Files.isReadable(file) || Files.isDirectory(file)) {
        throw new ConfigException(key + ": '" + file + "' " + whyUnreadable(file));
      }
    }

    /**
     * Why this process cannot read {@code file}, and what fixes it: a key written by {@code
     * fencekeeper certs} as root is root's alone until it is given to the service user.
     */
    static String whyUnreadable(Path file) {
      if (!Files.exists(file)) {
        return "does not exist";
      }
      if (Files.isDirectory(file)) {
        return "is a directory, not a file";
      }
      String user = System.getProperty("user.name");
      String how = "";
      try {
        PosixFileAttributes a = Files.readAttributes(file, PosixFileAttributes.class);
        how =
            " (it belongs to "
                + a.owner().getName()
                + ":"
                + a.group().getName()
                + ", mode "
                + PosixFilePermissions.toString(a.permissions())
                + ")";
      } catch (IOException | UnsupportedOperationException e) {
        // No attributes to show; the fix is the same.
      }
      return "is not readable by user "
          + user
          + how
          + ": give it to that user (`chown "
          + user
          + " "
          + file
          + "`), or issue it with `fencekeeper certs DIR --owner "
          + user
          + "`";
    }
  }

  /** TLS files (all three or none) and identities from key values. */
  static Security of(java.util.Map<ConfigKey<?>, Object> values) {
    Path cert = Keys.TLS_CERT.valueIn(values);
    Path key = Keys.TLS_KEY.valueIn(values);
    Path trust = Keys.TLS_TRUST.valueIn(values);
    Security.TlsFiles tls =
        cert != null || key != null || trust != null
            ? new Security.TlsFiles(cert, key, trust)
            : null;
    return new Security(tls, Keys.AUTHZ_ADMINS.valueIn(values), Keys.AUTHZ_NODES.valueIn(values));
  }

  /** Sets the keys {@link #of} reads to this security's values (TLS files left out when none). */
  void putInto(java.util.Map<ConfigKey<?>, Object> values) {
    values.put(Keys.AUTHZ_ADMINS, admins);
    values.put(Keys.AUTHZ_NODES, nodes);
    values.remove(Keys.TLS_CERT);
    values.remove(Keys.TLS_KEY);
    values.remove(Keys.TLS_TRUST);
    if (tls != null) {
      values.put(Keys.TLS_CERT, tls.cert());
      values.put(Keys.TLS_KEY, tls.key());
      values.put(Keys.TLS_TRUST, tls.trust());
    }
  }
}
