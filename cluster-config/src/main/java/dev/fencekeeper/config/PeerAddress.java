package dev.fencekeeper.config;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * One cluster member: its Raft peer id and the host and port its gRPC server listens on. Written
 * {@code id@host:port} in config files, e.g. {@code n1@127.0.0.1:7301}; IPv6 hosts go in brackets,
 * {@code n1@[::1]:7301}, and are held here without them.
 */
public record PeerAddress(String id, String host, int port) {

  static final Pattern ID = Pattern.compile("[A-Za-z0-9_-]{1,64}");
  // Hostnames and IPv4 literals; IPv6 literals are checked separately because ':' is also the port
  // separator. Anything else (spaces, '@', ',') would break the peers list syntax or gRPC target.
  private static final Pattern HOST = Pattern.compile("[A-Za-z0-9._-]{1,253}");
  private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]{2,45}(%[A-Za-z0-9._-]+)?");
  private static final String EXAMPLE = "n1@127.0.0.1:7301";

  public PeerAddress {
    validate("peer", id, host, port);
  }

  /** {@code host:port}, bracketing IPv6 literals: the form gRPC and {@code RaftPeer} expect. */
  public String address() {
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
  }

  /** The config-file form, {@code id@host:port}; {@link #parse} reads it back. */
  @Override
  public String toString() {
    return id + "@" + address();
  }

  /**
   * Parses {@code id@host:port}.
   *
   * @throws ConfigException naming the text and what is wrong with it
   */
  public static PeerAddress parse(String idAtHostPort) {
    return parse("peer", idAtHostPort);
  }

  /** As {@link #parse(String)}, naming {@code key} (e.g. {@code peers}) in any error. */
  static PeerAddress parse(String key, String text) {
    if (text == null) {
      throw new ConfigException(key + ": missing; expected id@host:port (e.g. " + EXAMPLE + ")");
    }
    String s = text.trim();
    int at = s.indexOf('@');
    if (at < 0) {
      throw new ConfigException(
          key + ": '" + text + "' has no peer id; expected id@host:port (e.g. " + EXAMPLE + ")");
    }
    String id = s.substring(0, at);
    HostPort hp =
        hostPort(key, text, s.substring(at + 1), "; expected id@host:port (e.g. " + EXAMPLE + ")");
    validate(key, id, hp.host, hp.port);
    return new PeerAddress(id, hp.host, hp.port);
  }

  /** Host and port parsed from {@code host:port} or {@code [v6]:port}. */
  record HostPort(String host, int port) {}

  /** {@code hint} tells the user the accepted syntax, which differs between callers. */
  static HostPort hostPort(String key, String whole, String hostPort, String hint) {
    int colon = hostPort.lastIndexOf(':');
    if (colon < 0) {
      throw new ConfigException(key + ": '" + whole + "' has no port" + hint);
    }
    String host = hostPort.substring(0, colon);
    String portText = hostPort.substring(colon + 1);
    if (host.startsWith("[") && host.endsWith("]") && host.length() > 2) {
      host = host.substring(1, host.length() - 1);
      if (!IPV6.matcher(host).matches() || host.indexOf(':') < 0) {
        throw new ConfigException(
            key + ": '" + whole + "' has an invalid IPv6 address '" + host + "'");
      }
    } else if (host.indexOf(':') >= 0) {
      throw new ConfigException(
          key
              + ": '"
              + whole
              + "' is ambiguous; write IPv6 addresses in brackets, e.g. n1@[::1]:7301");
    } else if (!HOST.matcher(host).matches()) {
      throw new ConfigException(
          key + ": '" + whole + "' has an invalid host '" + host + "'" + hint);
    }
    int port;
    try {
      port = Integer.parseInt(portText);
    } catch (NumberFormatException e) {
      throw new ConfigException(
          key + ": '" + whole + "' has an invalid port '" + portText + "'" + hint);
    }
    if (port < 1 || port > 65535) {
      throw new ConfigException(key + ": '" + whole + "' has port " + port + " outside 1..65535");
    }
    return new HostPort(host, port);
  }

  private static void validate(String key, String id, String host, int port) {
    if (id == null || !ID.matcher(id).matches()) {
      throw new ConfigException(key + ": peer id '" + id + "' must match [A-Za-z0-9_-]{1,64}");
    }
    if (host == null
        || !(HOST.matcher(host).matches()
            || (host.indexOf(':') >= 0 && IPV6.matcher(host).matches()))) {
      throw new ConfigException(key + ": peer " + id + " has an invalid host '" + host + "'");
    }
    if (port < 1 || port > 65535) {
      throw new ConfigException(key + ": peer " + id + " has port " + port + " outside 1..65535");
    }
  }

  /**
   * {@code host} if it is a host name, an IPv4 or an (unbracketed) IPv6 literal, as in {@code
   * peers}.
   */
  static String checkHost(String key, String host) {
    // Every IPv6 literal has at least two colons; one colon is a host:port given by mistake.
    if (host == null
        || !(HOST.matcher(host).matches()
            || (host.chars().filter(c -> c == ':').count() >= 2 && IPV6.matcher(host).matches()))) {
      throw new ConfigException(
          key
              + ": '"
              + host
              + "' is not a host name or IP address (e.g. 10.0.0.1, 0.0.0.0 for every interface,"
              + " ::)");
    }
    return host;
  }

  /** Case-folded {@code host:port}, for spotting two peers configured on the same endpoint. */
  String endpointKey() {
    return address().toLowerCase(Locale.ROOT);
  }
}
