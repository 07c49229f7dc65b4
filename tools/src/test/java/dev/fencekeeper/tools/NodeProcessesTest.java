package dev.fencekeeper.tools;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class NodeProcessesTest {

  @Test
  void nodesOnTwoCoresOrFewerCompileWithC1Only() {
    assertThat(NodeProcesses.nodeJvmFlags(1)).contains("-XX:TieredStopAtLevel=1");
    assertThat(NodeProcesses.nodeJvmFlags(2)).contains("-XX:TieredStopAtLevel=1");
    assertThat(NodeProcesses.nodeJvmFlags(4)).doesNotContain("-XX:TieredStopAtLevel=1");
    assertThat(NodeProcesses.nodeJvmFlags(4)).contains("-XX:+UseTransparentHugePages");
  }
}
