package dev.fencekeeper.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Loopback ports that refuse every connection for as long as this is open. Each is held by a TCP
 * socket that is bound but never listens: connecting to it is refused, and no other process can
 * bind it meanwhile. A port found free and closed again would not do: a cluster of another test
 * fork may bind it a moment later and answer.
 */
public final class RefusingPorts implements AutoCloseable {
  private final List<Socket> held = new ArrayList<>();

  private RefusingPorts(int count) {
    try {
      for (int i = 0; i < count; i++) {
        Socket socket = new Socket();
        held.add(socket);
        socket.bind(new InetSocketAddress("127.0.0.1", 0));
      }
    } catch (IOException e) {
      close();
      throw new UncheckedIOException(e);
    }
  }

  /** {@code count} ports, refused until {@link #close}. */
  public static RefusingPorts open(int count) {
    return new RefusingPorts(count);
  }

  public List<Integer> ports() {
    return held.stream().map(Socket::getLocalPort).toList();
  }

  /** The ports as a peer list: {@code 127.0.0.1:p1,127.0.0.1:p2,…}. */
  public String peers() {
    return ports().stream().map(p -> "127.0.0.1:" + p).collect(Collectors.joining(","));
  }

  /** The ports as a peer list with ids: {@code n1@127.0.0.1:p1,n2@127.0.0.1:p2,…}. */
  public String peersWithIds() {
    List<Integer> ports = ports();
    List<String> peers = new ArrayList<>();
    for (int i = 0; i < ports.size(); i++) {
      peers.add("n" + (i + 1) + "@127.0.0.1:" + ports.get(i));
    }
    return String.join(",", peers);
  }

  @Override
  public void close() {
    for (Socket socket : held) {
      try {
        socket.close();
      } catch (IOException e) {
        // Closing a socket that never connected releases its port; nothing else to undo.
      }
    }
  }
}
