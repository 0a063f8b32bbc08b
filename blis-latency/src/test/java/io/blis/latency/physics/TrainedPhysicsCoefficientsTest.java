package io.blis.latency.physics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.api.Coefficients;
import io.blis.latency.coeff.CoefficientFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TrainedPhysicsCoefficientsTest {

  @TempDir Path dir;

  @Test
  void namesUnitsAndBoundsAreConsistent() {
    assertThat(TrainedPhysicsCoefficients.size()).isEqualTo(19);
    assertThat(TrainedPhysicsCoefficients.names()).doesNotHaveDuplicates()
        .startsWith("prefill_compute").endsWith("preemption_us");
    double[] lo = TrainedPhysicsCoefficients.lowerBounds();
    double[] hi = TrainedPhysicsCoefficients.upperBounds();
    double[] d = TrainedPhysicsCoefficients.defaults();
    for (int i = 0; i < d.length; i++) {
      var t = TrainedPhysicsCoefficients.terms().get(i);
      assertThat(lo[i]).as(t.name()).isLessThan(hi[i]);
      assertThat(d[i]).as(t.name()).isBetween(lo[i], hi[i]);
      if (t.name().equals("decode_compute")) {
        // added on top of the weight reads: any fraction of the decode MMA time may hide under them
        assertThat(lo[i]).as(t.name()).isZero();
      } else if (t.unit().equals("x")) {
        assertThat(lo[i]).as("multiplier %s is an inverse efficiency", t.name()).isEqualTo(1.0);
      } else {
        assertThat(lo[i]).as(t.name()).isZero();
      }
    }
  }

  @Test
  void vectorRoundTripsThroughCoefficientsAndAFile() throws IOException {
    double[] v = TrainedPhysicsCoefficients.defaults().clone();
    v[3] = 1.234567890123;
    v[17] = 77;
    Coefficients c = TrainedPhysicsCoefficients.toCoefficients(v, "fit");
    assertThat(TrainedPhysicsCoefficients.toArray(c)).containsExactly(v);
    Path f = dir.resolve("fit.yaml");
    Files.writeString(f, CoefficientFiles.toYaml("trained-physics", "a \"fit\"", c));
    var file = CoefficientFiles.read(f);
    assertThat(file.latencyModel()).isEqualTo("trained-physics");
    assertThat(TrainedPhysicsCoefficients.toArray(file.coefficients())).containsExactly(v);
  }

  @Test
  void wrongLengthOrNegativeValuesAreRejected() {
    assertThatThrownBy(() -> TrainedPhysicsCoefficients.toCoefficients(new double[3], "fit"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("needs 19 coefficients");
    double[] v = TrainedPhysicsCoefficients.defaults();
    v[10] = -1;
    assertThatThrownBy(() -> TrainedPhysicsCoefficients.toCoefficients(v, "fit"))
        .hasMessageContaining("per_request_us must be finite and >= 0");
  }
}
