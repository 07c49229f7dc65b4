package dev.fencekeeper.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class CommonPoolTest {

  @Test
  void raisesTheDefaultOnlyWhereItWouldStartAThreadPerStage() {
    assertThat(CommonPool.parallelismToSet(null, 1)).isEqualTo(OptionalInt.of(2));
    assertThat(CommonPool.parallelismToSet(null, 2)).isEqualTo(OptionalInt.of(2));
    assertThat(CommonPool.parallelismToSet(null, 3)).isEmpty();
    assertThat(CommonPool.parallelismToSet(null, 64)).isEmpty();
  }

  @Test
  void keepsAParallelismTheUserGave() {
    assertThat(CommonPool.parallelismToSet("1", 2)).isEmpty();
    assertThat(CommonPool.parallelismToSet("8", 2)).isEmpty();
  }

  @Test
  void warnsWithTheFlagThatFixesIt() {
    assertThat(CommonPool.threadPerStageWarning(1))
        .hasValueSatisfying(
            w ->
                assertThat(w).contains("-Djava.util.concurrent.ForkJoinPool.common.parallelism=2"));
    assertThat(CommonPool.threadPerStageWarning(2)).isEmpty();
  }
}
