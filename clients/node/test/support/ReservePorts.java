import dev.fencekeeper.config.LocalPorts;

/**
 * Run by the Node tests (support/cluster.mjs) with the launcher's jar on the class path: picks a base port
 * for a three-node cluster through the Java tests' own LocalPorts (the nodes' Raft, client and gateway
 * ports and `up`'s metrics ports at +100, all below the ephemeral range), prints it, and holds the
 * reservation until its standard input closes (when the Node process that asked ends), so that no Java
 * test, drill or other Node run on this machine picks the same ports meanwhile.
 */
public final class ReservePorts {
  private ReservePorts() {}

  public static void main(String[] args) throws Exception {
    System.out.println(LocalPorts.freeBasePort(3, 100));
    System.out.flush();
    while (System.in.read() != -1) {
      // Only the end of the input matters.
    }
  }
}
