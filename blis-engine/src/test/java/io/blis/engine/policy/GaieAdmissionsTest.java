package io.blis.engine.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.api.AdmissionPolicy;
import io.blis.engine.TestViews.Inst;
import io.blis.engine.TestViews.View;
import org.junit.jupiter.api.Test;

/** Go BLIS's tier-shed and gaie-legacy admissions, on hand-made pools. */
class GaieAdmissionsTest {

  private static boolean admits(AdmissionPolicy p, String sloClass, View v) {
    return p.admit(new PoliciesTest.Req(1, 0, 100, sloClass), v).admitted();
  }

  /** Two instances: waiting 4 and 8, KV 0.5 and 0.9 (GAIE saturation mean(0.8, 1.6) = 1.2). */
  private static final View SATURATED = new View(0, new Inst(0, 4, 10, 0.5, 14, 0), new Inst(1, 8, 10, 0.9, 18, 0));
  /** Waiting 1 and 2, KV 0.2 and 0.4: saturation mean(0.25, 0.5) = 0.375. */
  private static final View CALM = new View(0, new Inst(0, 1, 3, 0.2, 4, 0), new Inst(1, 2, 3, 0.4, 5, 0));

  @Test
  void gaieLegacyShedsOnlySheddableClassesAndOnlyWhenThePoolIsSaturated() {
    assertThat(Admissions.gaieSaturation(SATURATED, 5, 0.8)).isCloseTo(1.2, org.assertj.core.data.Offset.offset(1e-12));
    assertThat(Admissions.gaieSaturation(CALM, 5, 0.8)).isCloseTo(0.375, org.assertj.core.data.Offset.offset(1e-12));
    AdmissionPolicy p = Admissions.gaieLegacy(5, 0.8);
    for (String c : new String[] {"batch", "sheddable", "background"}) {
      assertThat(admits(p, c, SATURATED)).as(c).isFalse();
      assertThat(admits(p, c, CALM)).as(c).isTrue();
    }
    for (String c : new String[] {"critical", "standard"}) {
      assertThat(admits(p, c, SATURATED)).as(c).isTrue();
    }
    assertThat(p.admit(new PoliciesTest.Req(1, 0, 100, "batch"), SATURATED).reason()).isEqualTo(Admissions.GAIE_SATURATED);
    assertThatThrownBy(() -> Admissions.gaieLegacy(5, 1.5)).hasMessageContaining("kv_threshold in (0, 1]");
  }

  @Test
  void tierShedRejectsLowerTiersWhileAnInstanceIsLoadedAboveTheThreshold() {
    // loads (waiting + running) 14 and 18 in SATURATED, 4 and 5 in CALM
    AdmissionPolicy p = Admissions.tierShed(10, 3);
    assertThat(admits(p, "batch", SATURATED)).isFalse();
    assertThat(admits(p, "standard", SATURATED)).isTrue();
    assertThat(admits(p, "batch", CALM)).isTrue();
    // min priority 0: only the negative (sheddable) classes go; -3 admits everything
    assertThat(admits(Admissions.tierShed(0, 0), "batch", CALM)).isFalse();
    assertThat(admits(Admissions.tierShed(0, 0), "critical", CALM)).isTrue();
    assertThat(admits(Admissions.tierShed(0, -3), "background", SATURATED)).isTrue();
    assertThat(Admissions.gaiePriority("critical")).isEqualTo(4);
    assertThat(Admissions.gaiePriority("anything-else")).isEqualTo(3);
  }
}
