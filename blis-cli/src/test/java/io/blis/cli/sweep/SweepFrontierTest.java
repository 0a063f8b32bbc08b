package io.blis.cli.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The sorted frontier is the set of rows no other row dominates, as the pairwise definition says. */
class SweepFrontierTest {

  private static final String LATENCY = "e2e_p99_ms";

  /** Every row against every other: the definition, O(n^2). */
  private static List<ObjectNode> pairwise(List<ObjectNode> rows) {
    List<ObjectNode> out = new ArrayList<>();
    for (ObjectNode a : rows) {
      double ax = a.get("rps_per_usd_hour").asDouble();
      double ay = a.get(LATENCY).asDouble();
      boolean dominated = false;
      for (ObjectNode b : rows) {
        double bx = b.get("rps_per_usd_hour").asDouble();
        double by = b.get(LATENCY).asDouble();
        dominated |= bx >= ax && by <= ay && (bx > ax || by < ay);
      }
      if (!dominated) {
        out.add(a);
      }
    }
    return out;
  }

  /** Random rows; small value ranges make ties and duplicate points common. */
  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
  void theSortedFrontierIsThePairwiseOne(long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    int n = 1 + rnd.nextInt(seed % 3 == 0 ? 8 : 400);
    int range = seed % 2 == 0 ? 6 : 1000;
    List<ObjectNode> rows = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ObjectNode r = JsonNodeFactory.instance.objectNode();
      r.put("id", i);
      r.put("rps_per_usd_hour", rnd.nextInt(range) / 10.0);
      r.put(LATENCY, rnd.nextInt(range) * 3.0);
      rows.add(r);
    }
    List<ObjectNode> fast = SweepTable.frontier(rows, "e2e_p99_ms");
    assertThat(fast).as("seed %d, %d rows", seed, n).containsExactlyElementsOf(pairwise(rows));
  }
}
