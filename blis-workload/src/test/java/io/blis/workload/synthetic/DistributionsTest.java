package io.blis.workload.synthetic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.workload.TestSupport;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.assertj.core.data.Offset;
import org.assertj.core.data.Percentage;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class DistributionsTest {

  static final int N = 200_000;

  static Stream<Arguments> arrivals() {
    return Stream.of(11L, 2024L).flatMap(seed -> Stream.of(
        Arguments.of(seed, new ArrivalProcess.Poisson(4), 1.0),
        Arguments.of(seed, new ArrivalProcess.Constant(4), 0.0),
        Arguments.of(seed, new ArrivalProcess.Gamma(4, 0.5), 0.5),
        Arguments.of(seed, new ArrivalProcess.Gamma(4, 3.0), 3.0),
        Arguments.of(seed, new ArrivalProcess.Weibull(4, 0.4), 0.4),
        Arguments.of(seed, new ArrivalProcess.Weibull(4, 2.5), 2.5)));
  }

  @ParameterizedTest(name = "seed {0}: {1}")
  @MethodSource("arrivals")
  void arrivalGapsHaveTheRequestedMeanAndCv(long seed, ArrivalProcess p, double cv) {
    SplittableRandom rng = new SplittableRandom(seed);
    double[] gaps = new double[N];
    for (int i = 0; i < N; i++) {
      gaps[i] = p.nextGapS(rng);
      assertThat(gaps[i]).isPositive();
    }
    assertThat(TestSupport.mean(gaps)).isCloseTo(0.25, Percentage.withPercentage(cv > 2 ? 3 : 1.5));
    assertThat(TestSupport.cv(gaps)).isCloseTo(cv, Offset.offset(Math.max(0.01, 0.06 * cv)));
  }

  static Stream<Arguments> lengths() {
    double lnMean = Math.exp(6 + 0.6 * 0.6 / 2);
    double lnCv = Math.sqrt(Math.exp(0.36) - 1);
    return Stream.of(5L, 77L).flatMap(seed -> Stream.of(
        Arguments.of(seed, new LengthSpec(600, 120, 1, 100_000), 600.0, 0.2),
        Arguments.of(seed, new LengthDistribution.Exponential(300, 1, 1_000_000), 300.0, 1.0),
        Arguments.of(seed, new LengthDistribution.LogNormal(6, 0.6, 1, 1_000_000), lnMean, lnCv),
        Arguments.of(seed, new LengthDistribution.Constant(42), 42.0, 0.0),
        Arguments.of(seed, new LengthDistribution.Empirical(new int[] {300, 100, 200},
            new double[] {0.2, 0.5, 0.3}), 0.5 * 100 + 0.3 * 200 + 0.2 * 300,
            Math.sqrt(0.5 * 100 * 100 + 0.3 * 200 * 200 + 0.2 * 300 * 300 - 170.0 * 170) / 170)));
  }

  @ParameterizedTest(name = "seed {0}: {1}")
  @MethodSource("lengths")
  void lengthsHaveTheRequestedMeanAndCv(long seed, LengthDistribution d, double mean, double cv) {
    SplittableRandom rng = new SplittableRandom(seed);
    double[] xs = new double[N];
    for (int i = 0; i < N; i++) {
      int v = d.sample(rng);
      assertThat(v).isPositive();
      xs[i] = v;
    }
    assertThat(TestSupport.mean(xs)).isCloseTo(mean, Percentage.withPercentage(1));
    assertThat(TestSupport.cv(xs)).isCloseTo(cv, Offset.offset(0.02));
    assertThat(d.nominalMean()).isCloseTo(mean, Percentage.withPercentage(0.01));
  }

  @ParameterizedTest(name = "cv {0}")
  @org.junit.jupiter.params.provider.ValueSource(doubles = {0.1, 0.5, 1.0, 2.0, 5.0})
  void weibullShapeMatchesCv(double cv) {
    ArrivalProcess.Weibull w = new ArrivalProcess.Weibull(1, cv);
    assertThat(ArrivalProcess.Weibull.weibullCv(w.shape())).isCloseTo(cv, Offset.offset(1e-9));
    if (cv == 1.0) {
      assertThat(w.shape()).isCloseTo(1.0, Offset.offset(1e-9));
    }
  }

  @org.junit.jupiter.api.Test
  void invalidParametersAreRejected() {
    assertThatThrownBy(() -> new ArrivalProcess.Poisson(0)).hasMessageContaining("poisson rate");
    assertThatThrownBy(() -> new ArrivalProcess.Gamma(1, Double.NaN)).hasMessageContaining("gamma cv");
    assertThatThrownBy(() -> new ArrivalProcess.Weibull(1, 1e-5)).hasMessageContaining("weibull cv");
    assertThatThrownBy(() -> new LengthDistribution.Constant(0)).hasMessageContaining("at least 1");
    assertThatThrownBy(() -> new LengthDistribution.Empirical(new int[] {5, 5}, new double[] {1, 1}))
        .hasMessageContaining("twice");
    assertThatThrownBy(() -> new LengthDistribution.Empirical(new int[] {5}, new double[] {-1}))
        .hasMessageContaining(">= 0");
    assertThatThrownBy(() -> new LengthDistribution.LogNormal(1, -1, 1, 5)).hasMessageContaining("sigma");
  }
}
