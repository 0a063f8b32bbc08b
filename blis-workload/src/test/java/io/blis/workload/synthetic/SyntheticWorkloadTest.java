package io.blis.workload.synthetic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.workload.RequestSpec;
import io.blis.workload.TestSupport;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class SyntheticWorkloadTest {

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1, 42, 20260217})
  void poissonGaussianMatchesItsParameters(long seed) {
    LengthSpec in = new LengthSpec(500, 100, 10, 2000);
    LengthSpec out = new LengthSpec(200, 50, 1, 1000);
    List<RequestSpec> rs =
        TestSupport.drain(SyntheticWorkload.poissonGaussian(8.0, 20_000, in, out, 64, seed));
    assertThat(rs).hasSize(20_000);
    double[] gaps = new double[rs.size()];
    double[] inputs = new double[rs.size()];
    double[] outputs = new double[rs.size()];
    long prev = 0;
    for (int i = 0; i < rs.size(); i++) {
      RequestSpec r = rs.get(i);
      assertThat(r.id()).isEqualTo(i);
      assertThat(r.arrivalTimeUs()).isGreaterThanOrEqualTo(prev);
      gaps[i] = (r.arrivalTimeUs() - prev) / 1e6;
      prev = r.arrivalTimeUs();
      inputs[i] = r.inputTokens() - 64;
      outputs[i] = r.outputTokens();
      assertThat(r.prefixGroup()).isEqualTo("shared");
      assertThat(r.prefixLength()).isEqualTo(64);
      assertThat(Arrays.copyOf(r.promptTokens(), 64)).isEqualTo(Arrays.copyOf(rs.get(0).promptTokens(), 64));
    }
    assertThat(TestSupport.mean(gaps)).isCloseTo(1 / 8.0, org.assertj.core.data.Percentage.withPercentage(3));
    assertThat(TestSupport.cv(gaps)).isCloseTo(1.0, org.assertj.core.data.Offset.offset(0.03));
    assertThat(TestSupport.mean(inputs)).isCloseTo(500, org.assertj.core.data.Offset.offset(3.0));
    assertThat(TestSupport.mean(outputs)).isCloseTo(200, org.assertj.core.data.Offset.offset(1.5));
    // Distinct requests have distinct content after the prefix.
    assertThat(rs.get(0).promptTokens()[64]).isNotEqualTo(rs.get(1).promptTokens()[64]);
  }

  @Test
  void sameSeedSameRequestsDifferentSeedDifferent() {
    LengthSpec len = new LengthSpec(100, 30, 1, 400);
    List<RequestSpec> a = TestSupport.drain(SyntheticWorkload.poissonGaussian(5, 500, len, len, 0, 7));
    List<RequestSpec> b = TestSupport.drain(SyntheticWorkload.poissonGaussian(5, 500, len, len, 0, 7));
    List<RequestSpec> c = TestSupport.drain(SyntheticWorkload.poissonGaussian(5, 500, len, len, 0, 8));
    assertThat(a).isEqualTo(b);
    assertThat(a).isNotEqualTo(c);
    assertThat(a.get(0).prefixGroup()).isEmpty();
  }

  @Test
  void lengthsAreClampedAndRounded() {
    LengthSpec wide = new LengthSpec(50, 500, 20, 60);
    List<RequestSpec> rs = TestSupport.drain(SyntheticWorkload.poissonGaussian(1, 2000, wide, wide, 0, 3));
    assertThat(rs).allSatisfy(r -> {
      assertThat(r.inputTokens()).isBetween(20, 60);
      assertThat(r.outputTokens()).isBetween(20, 60);
    });
    assertThat(rs.stream().filter(r -> r.inputTokens() == 20).count()).isGreaterThan(500);
    assertThat(rs.stream().filter(r -> r.inputTokens() == 60).count()).isGreaterThan(500);
  }

  @Test
  void invalidLengthSpecsAreRejected() {
    assertThatThrownBy(() -> new LengthSpec(10, -1, 1, 10)).hasMessageContaining("std_dev");
    assertThatThrownBy(() -> new LengthSpec(10, 1, 0, 10)).hasMessageContaining("min");
    assertThatThrownBy(() -> new LengthSpec(10, 1, 5, 4)).hasMessageContaining("max");
    assertThatThrownBy(() -> new LengthSpec(Double.NaN, 1, 5, 9)).hasMessageContaining("mean");
  }
}
