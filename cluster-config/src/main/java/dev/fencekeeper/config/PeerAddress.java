package dev.fencekeeper.config;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

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
  private static final String CLIENT_EXAMPLE = "127.0.0.1:7501";
  static final String ENDPOINTS_EXAMPLE = "10.0.0.1:7501,10.0.0.2:7501,10.0.0.3:7501";
  static final String LIST_EXAMPLE = "n1@127.0.0.1:7301,n2@127.0.0.1:7302,n3@127.0.0.1:7303";

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
   * Whether {@code host} is a host name, an IPv4 or an (unbracketed) IPv6 literal, as in {@code
   * peers}.
   */
  static boolean isHost(String host) {
    // Every IPv6 literal has at least two colons; one colon is a host:port given by mistake.
    return host != null
        && (HOST.matcher(host).matches()
            || (host.chars().filter(c -> c == ':').count() >= 2 && IPV6.matcher(host).matches()));
  }

  /**
   * {@code text} as peers: all {@code id@host:port}, or with {@code allowBareHostPort} also all
   * {@code host:port} (ids n1, n2, ... assigned in order). Mixing the two is refused: an assigned
   * id could collide with a given one.
   */
  static List<PeerAddress> parseList(String key, String text, boolean allowBareHostPort) {
    if (text == null || text.isBlank()) {
      throw new ConfigException(
          key
              + ": '"
              + (text == null ? "" : text)
              + "' lists no peers; expected id@host:port,... e.g. "
              + LIST_EXAMPLE);
    }
    String[] entries = text.split(",", -1);
    List<PeerAddress> peers = new ArrayList<>(entries.length);
    Boolean withIds = null;
    for (int i = 0; i < entries.length; i++) {
      String entry = entries[i].trim();
      if (entry.isEmpty()) {
        throw new ConfigException(
            key + ": '" + text + "' has an empty entry at position " + (i + 1));
      }
      boolean hasId = entry.indexOf('@') >= 0;
      if (hasId || !allowBareHostPort) {
        peers.add(parse(key, entry));
      } else {
        HostPort hp =
            hostPort(
                key, entry, entry, "; expected host:port or id@host:port (e.g. 127.0.0.1:7301)");
        peers.add(new PeerAddress("n" + (i + 1), hp.host(), hp.port()));
      }
      if (withIds != null && withIds != hasId) {
        throw new ConfigException(
            key
                + ": '"
                + text
                + "' mixes host:port and id@host:port entries; use one form for all");
      }
      withIds = hasId;
    }
    return peers;
  }

  /**
   * {@code text} as client endpoints: {@code host:port,...} of the nodes' client ports, given ids
   * n1, n2, ... in order. An entry in the {@code id@host:port} form of {@code peers} is refused at
   * once, naming the client port that belongs there by the default rule: it is a Raft address.
   */
  static List<PeerAddress> parseEndpoints(String key, String text) {
    if (text == null || text.isBlank()) {
      throw new ConfigException(
          key
              + ": '"
              + (text == null ? "" : text)
              + "' lists no endpoints; expected host:port,... of the nodes' client ports, e.g. "
              + ENDPOINTS_EXAMPLE);
    }
    String[] entries = text.split(",", -1);
    List<PeerAddress> endpoints = new ArrayList<>(entries.length);
    for (int i = 0; i < entries.length; i++) {
      String entry = entries[i].trim();
      if (entry.isEmpty()) {
        throw new ConfigException(
            key + ": '" + text + "' has an empty entry at position " + (i + 1));
      }
      if (entry.indexOf('@') >= 0) {
        throw new ConfigException(key + ": " + raftAddressHint(key, entry));
      }
      HostPort hp =
          hostPort(
              key,
              entry,
              entry,
              "; expected host:port of a node's client port (e.g. " + CLIENT_EXAMPLE + ")");
      endpoints.add(new PeerAddress("n" + (i + 1), hp.host(), hp.port()));
    }
    return endpoints;
  }

  /**
   * Why {@code entry}, an {@code id@host:port} Raft address given where a client endpoint belongs,
   * is refused, and the client port to give instead.
   */
  private static String raftAddressHint(String key, String entry) {
    String hint;
    try {
      PeerAddress raft = parse(key, entry);
      int clientPort = raft.port() + ClusterConfig.CLIENT_PORT_OFFSET;
      hint =
          clientPort <= 65535
              ? "; give its client port instead: "
                  + new PeerAddress(raft.id(), raft.host(), clientPort).address()
                  + " (Raft port + "
                  + ClusterConfig.CLIENT_PORT_OFFSET
                  + " unless the node sets client.port)"
              : "; give the node's client port (its client.port) instead";
    } catch (ConfigException e) {
      hint = "; give the node's client port as host:port instead (e.g. " + CLIENT_EXAMPLE + ")";
    }
    return "'" + entry + "' is a Raft peer address (id@host:port), which only nodes use" + hint;
  }

  /**
   * Null if {@code peers} is a usable member list, else what is wrong with it: empty, or two
   * members sharing an id or an address.
   */
  static String duplicateProblem(List<PeerAddress> peers) {
    if (peers.isEmpty()) {
      return "lists no peers; expected id@host:port,... e.g. " + LIST_EXAMPLE;
    }
    Set<String> ids = new HashSet<>();
    Map<String, PeerAddress> byEndpoint = new HashMap<>();
    for (PeerAddress peer : peers) {
      if (!ids.add(peer.id())) {
        return "has duplicate peer id '" + peer.id() + "'";
      }
      PeerAddress other = byEndpoint.putIfAbsent(peer.endpointKey(), peer);
      if (other != null) {
        return "has '" + other.id() + "' and '" + peer.id() + "' both at address " + peer.address();
      }
    }
    return null;
  }

  /** Case-folded {@code host:port}, for spotting two peers configured on the same endpoint. */
  String endpointKey() {
    return address().toLowerCase(Locale.ROOT);
  }

  /** The ids of {@code peers} as {@code (n1, n2, n3)}, for messages. */
  static String ids(List<PeerAddress> peers) {
    return peers.stream().map(PeerAddress::id).collect(Collectors.joining(", ", "(", ")"));
  }
}
