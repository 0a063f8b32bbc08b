package io.blis.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Data-parallel ranks of an MoE instance end their steps together. */
class StepGateTest {

  @Test
  void aStepEndsNoEarlierThanThePeerStepsItOverlaps() {
    StepGate g = new StepGate();
    assertThat(g.align(0, 10)).isEqualTo(10); // rank A: 0..10
    assertThat(g.align(2, 5)).isEqualTo(8); // rank B would end at 7: waits for A, ends at 10
    assertThat(g.align(10, 4)).isEqualTo(4); // both start again at 10; A: 10..14
    assertThat(g.align(10, 6)).isEqualTo(6); // B: 10..16, the slower sets the end
    assertThat(g.align(14, 1)).isEqualTo(2); // A's next step waits for B's end at 16
    // after every rank is idle the next step runs alone
    assertThat(g.align(100, 3)).isEqualTo(3);
  }
}
