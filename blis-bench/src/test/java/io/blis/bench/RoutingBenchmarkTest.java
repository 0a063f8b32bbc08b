package io.blis.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RoutingBenchmarkTest {

  @ParameterizedTest
  @ValueSource(strings = {"round-robin", "least-loaded", "weighted", "prefix-affinity"})
  void everyRouterRoutesAcrossTheSixteenInstances(String router) {
    RoutingBenchmark b = new RoutingBenchmark();
    b.router = router;
    b.setUp();
    Set<Integer> chosen = new HashSet<>();
    for (int i = 0; i < 4096; i++) {
      int c = b.route();
      assertThat(c).isBetween(0, RoutingBenchmark.INSTANCES - 1);
      chosen.add(c);
    }
    assertThat(chosen).hasSizeGreaterThan(1);
  }
}
