package io.blis.engine.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class AcceptanceProfileTest {

  @Test
  void positionRatesBecomeConditionalRatesWithTheSameMean() {
    AcceptanceProfile p = AcceptanceProfile.ofPositionRates(0.73, 0.52, 0.355);
    assertThat(p.conditionalAt(0)).isCloseTo(0.73, within(1e-12));
    assertThat(p.conditionalAt(1)).isCloseTo(0.52 / 0.73, within(1e-12));
    assertThat(p.conditionalAt(2)).isCloseTo(0.355 / 0.52, within(1e-12));
    assertThat(p.meanAccepted(3)).isCloseTo(0.73 + 0.52 + 0.355, within(1e-12));
    assertThat(p.positionRate(2)).isCloseTo(0.355, within(1e-12));
  }

  @Test
  void drawsFollowEachPositionsRateAndSpreadOverEveryOutcome() {
    AcceptanceProfile p = AcceptanceProfile.ofPositionRates(0.73, 0.52, 0.355);
    SplittableRandom rng = new SplittableRandom(1);
    int n = 200_000;
    long[] atLeast = new long[4];
    long[] exactly = new long[4];
    for (int i = 0; i < n; i++) {
      int kept = p.draw(rng, 3);
      exactly[kept]++;
      for (int j = 0; j <= kept; j++) {
        atLeast[j]++;
      }
    }
    assertThat((double) atLeast[1] / n).isCloseTo(0.73, within(0.005));
    assertThat((double) atLeast[2] / n).isCloseTo(0.52, within(0.005));
    assertThat((double) atLeast[3] / n).isCloseTo(0.355, within(0.005));
    for (long e : exactly) {
      assertThat(e).as("every outcome 0..3 occurs: tokens per step have a spread").isGreaterThan(n / 10);
    }
  }

  @Test
  void aDrawNeverKeepsMoreThanWasProposed() {
    AcceptanceProfile all = AcceptanceProfile.ofPositionRates(1, 1, 1);
    SplittableRandom rng = new SplittableRandom(3);
    assertThat(all.draw(rng, 2)).isEqualTo(2);
    assertThat(all.draw(rng, 0)).isZero();
    assertThat(all.draw(rng, 5)).as("past the profile, its last position's rate").isEqualTo(5);
  }

  @Test
  void aMeanRateIsSpreadWithThatMean() {
    for (double alpha : new double[] {0.1, 0.5, 0.62, 0.9}) {
      AcceptanceProfile p = AcceptanceProfile.ofMeanRate(alpha, 4);
      assertThat(p.meanAccepted(4)).as("alpha " + alpha).isCloseTo(alpha * 4, within(1e-9));
      assertThat(p.positionRate(0)).isGreaterThan(p.positionRate(3));
    }
    assertThat(AcceptanceProfile.ofMeanRate(0, 3).meanAccepted(3)).isZero();
    assertThat(AcceptanceProfile.ofMeanRate(1, 3).meanAccepted(3)).isEqualTo(3.0);
  }

  @Test
  void badRatesAreRefusedWithTheirPosition() {
    assertThatThrownBy(() -> AcceptanceProfile.ofPositionRates(0.5, 0.6))
        .hasMessageContaining("position 2").hasMessageContaining("above position 1");
    assertThatThrownBy(() -> AcceptanceProfile.ofPositionRates(1.2)).hasMessageContaining("[0, 1]");
    assertThatThrownBy(() -> AcceptanceProfile.ofMeanRate(-0.1, 3)).hasMessageContaining("[0, 1]");
  }

  @Test
  void theBundledProfilesParseAndEachNamesItsSource() {
    AcceptanceProfiles t = AcceptanceProfiles.bundled();
    assertThat(t.profiles()).hasSizeGreaterThanOrEqualTo(8);
    assertThat(t.defaultFor(SpeculativeMethod.EAGLE3).name()).isEqualTo("eagle3-llama-3.1-8b-mt-bench");
    assertThat(t.defaultFor(SpeculativeMethod.MTP)).isNotNull();
    assertThat(t.defaultFor(SpeculativeMethod.NGRAM)).as("no published n-gram profile").isNull();
    assertThat(t.named("eagle3-llama-3.1-8b-mt-bench").profile().meanAccepted(3))
        .isCloseTo(0.7296 + 0.5208 + 0.3545, within(1e-9));
    t.profiles().forEach(e -> assertThat(e.source()).startsWith("https://"));
  }

  @Test
  void aTableWithoutSourcesOrWithRisingRatesIsRefused() {
    assertThatThrownBy(() -> AcceptanceProfiles.parse("""
        version: 1
        profiles:
          - {name: a, method: eagle3, position_rates: [0.5]}
        """, "t.yaml")).hasMessageContaining("t.yaml, profile 1 (a)").hasMessageContaining("source");
    assertThatThrownBy(() -> AcceptanceProfiles.parse("""
        version: 1
        profiles:
          - {name: a, method: eagle3, position_rates: [0.5, 0.7], source: https://x}
        """, "t.yaml")).hasMessageContaining("position 2");
  }
}
