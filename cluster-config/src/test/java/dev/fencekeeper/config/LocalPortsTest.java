package dev.fencekeeper.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class LocalPortsTest {

  // Guarantee: a port this JVM handed out is not handed out again, although nothing binds it.
  @Test
  void aPortHandedOutIsNotHandedOutAgainInTheSameJvm() {
    Set<Integer> seen = new HashSet<>();
    for (int i = 0; i < 1_000; i++) {
      int port = LocalPorts.freeNodePort();
      assertThat(seen.add(port)).as("port %d handed out twice", port).isTrue();
      assertThat(seen.add(port + ClusterConfig.CLIENT_PORT_OFFSET)).isTrue();
      assertThat(seen.add(port + ClusterConfig.HTTP_PORT_OFFSET)).isTrue();
    }
    int base = LocalPorts.freeBasePort(3, 100);
    for (int i = 0; i < 3; i++) {
      for (int offset :
          new int[] {0, 100, ClusterConfig.CLIENT_PORT_OFFSET, ClusterConfig.HTTP_PORT_OFFSET}) {
        assertThat(seen.add(base + i + offset)).isTrue();
      }
    }
    assertThat(LocalPorts.reserve(base)).isFalse();
  }

  // Guarantee: a port another process reserved is not reserved here while that process lives,
  // although nothing binds it, and can be once that process has ended.
  @Test
  void aPortAnotherProcessReservedIsNotReservedHereUntilItEnds() throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-cp");
    command.add(
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")));
    command.add(HoldPorts.class.getName());
    Process holder = new ProcessBuilder(command).redirectErrorStream(true).start();
    List<Integer> ports = new ArrayList<>();
    try {
      BufferedReader out =
          new BufferedReader(
              new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
      List<String> lines = new ArrayList<>();
      String line;
      while ((line = out.readLine()) != null && !line.startsWith("held ")) {
        lines.add(line);
      }
      assertThat(line).as("the holder's output: %s", lines).startsWith("held ");
      for (String port : line.substring("held ".length()).split(",")) {
        ports.add(Integer.parseInt(port));
      }
      assertThat(ports).hasSize(HoldPorts.COUNT);

      for (int port : ports) {
        assertThat(LocalPorts.isFree(port)).as("nothing binds %d", port).isTrue();
        assertThat(LocalPorts.reserve(port)).as("port %d, held by another process", port).isFalse();
      }
    } finally {
      holder.getOutputStream().close();
      assertThat(holder.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }
    for (int port : ports) {
      assertThat(LocalPorts.reserve(port)).as("port %d, its holder gone", port).isTrue();
    }
  }

  /** Picks free ports, names them, and holds them until its standard input ends. */
  static final class HoldPorts {
    static final int COUNT = 20;

    public static void main(String[] args) throws Exception {
      List<String> held = new ArrayList<>();
      for (int i = 0; i < COUNT; i++) {
        held.add(Integer.toString(LocalPorts.freePort()));
      }
      System.out.println("held " + String.join(",", held));
      System.out.flush();
      while (System.in.read() >= 0) {
        // until the test closes our input
      }
    }
  }
}
