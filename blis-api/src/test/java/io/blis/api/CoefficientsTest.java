package io.blis.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class CoefficientsTest {

  @Test
  void vectorsAreCopiedAndImmutable() {
    double[] alpha = {1.0, 2.0};
    Coefficients c = Coefficients.of("test", Map.of("alpha", alpha));
    alpha[0] = 99.0;
    assertThat(c.vector("alpha")).containsExactly(1.0, 2.0);
    c.vector("alpha")[1] = 7.0;
    assertThat(c.vector("alpha")).containsExactly(1.0, 2.0);
  }

  @Test
  void nonFiniteValuesAreRejectedWithTheirName() {
    assertThatThrownBy(() -> Coefficients.of("f.yaml", Map.of("beta", new double[] {1, Double.NaN})))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("f.yaml")
        .hasMessageContaining("beta[1]");
  }

  @Test
  void missingVectorNamesWhatExists() {
    Coefficients c = Coefficients.of("x", Map.of("alpha", new double[] {1}));
    assertThatThrownBy(() -> c.vector("beta")).hasMessageContaining("beta").hasMessageContaining("alpha");
  }

  @Test
  void unknownProviderListsAvailableNames() {
    assertThatThrownBy(() -> Providers.select(LatencyModelProvider.class, "nope"))
        .isInstanceOf(UnknownProviderException.class)
        .hasMessageStartingWith("unknown latency model 'nope'; available:");
  }
}
