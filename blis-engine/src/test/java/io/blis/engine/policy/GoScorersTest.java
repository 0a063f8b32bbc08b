package io.blis.engine.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.blis.api.Coefficients;
import io.blis.api.ProviderContext;
import io.blis.api.Providers;
import io.blis.api.Router;
import io.blis.api.RouterProvider;
import io.blis.engine.TestViews.Inst;
import io.blis.engine.TestViews.View;
import io.blis.engine.policy.PoliciesTest.Req;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Go BLIS's scorers in the weighted router, hand-computed (Go BLIS's sim/routing_*scorer*.go). */
class GoScorersTest {

  private static final Req R = new Req(1, 0, 100, "standard");

  /**
   * Instance (index, waiting, running, KV use, in flight, cached prompt tokens): waiting 4, 0, 2;
   * running 2, 6, 1; in flight 8, 6, 0; cached 32, 0, 64 tokens.
   */
  private static final View V = new View(0, new Inst(0, 4, 2, 0.5, 8, 32), new Inst(1, 0, 6, 0.25, 6, 0),
      new Inst(2, 2, 1, 0.75, 0, 64));

  private static double[] scores(String scorer, View v) {
    return scores(Routers.weighted(Map.of(scorer, 1.0)), v);
  }

  private static double[] scores(Router r, View v) {
    double[] s = new double[v.size()];
    assertThat(r.score(R, v, s)).isTrue();
    return s;
  }

  @Test
  void eachScorersFormulaByHand() {
    // cached 32, 0, 64: (x - 0) / 64
    assertThat(scores("precise-prefix-cache", V)).containsExactly(0.5, 0, 1);
    // waiting 4, 0, 2: (4 - x) / 4
    assertThat(scores("queue-depth-minmax", V)).containsExactly(0, 1, 0.5);
    // running 2, 6, 1: (6 - x) / 5
    assertThat(scores("running-requests", V)).containsExactly(0.8, 0, 1);
    // 4 x waiting + running: 18, 6, 9: (18 - x) / 12
    assertThat(scores("vllm-dp", V)).containsExactly(0, 1, 0.75);
    // waiting + running + in flight: 14, 12, 3
    assertThat(scores("load-balance", V)).containsExactly(1.0 / 15, 1.0 / 13, 1.0 / 4);
    // in flight 8, 6, 0 against the largest, 8
    assertThat(scores("active-requests", V)).containsExactly(0, 0.25, 1);
    // waiting 4, 0, 2: 0.5 (1 - q / 128), 0.5 for none
    assertThat(scores("load-aware", V)).containsExactly(0.5 * (1 - 4 / 128.0), 0.5, 0.5 * (1 - 2 / 128.0));
    assertThat(scores("load-aware", new View(0, new Inst(0, 128, 0, 0, 0, 0), new Inst(1, 1000, 0, 0, 0, 0),
        new Inst(2, 64, 0, 0, 0, 0)))).containsExactly(0, 0, 0.25);
    // Go BLIS's kv-utilization is this project's: 1 - KV use
    assertThat(scores("kv-utilization", V)).containsExactly(0.5, 0.75, 0.25);
    // some instance has some of the prompt cached: warm, 0.5 everywhere
    assertThat(scores("no-hit-lru", V)).containsExactly(0.5, 0.5, 0.5);
  }

  @Test
  void equalFiguresScoreOneEverywhereExceptActiveRequests() {
    View same = new View(0, new Inst(0, 1, 0, 0.5, 3, 0), new Inst(1, 0, 4, 0.5, 3, 0));
    assertThat(scores("precise-prefix-cache", same)).containsExactly(1, 1); // all 0 cached: 1, not 0
    assertThat(scores("vllm-dp", same)).containsExactly(1, 1); // 4 x 1 + 0 = 4 x 0 + 4
    assertThat(scores("running-requests", new View(0, new Inst(0, 0, 5, 0, 0, 0), new Inst(1, 9, 5, 0, 0, 0))))
        .containsExactly(1, 1);
    assertThat(scores("queue-depth-minmax", new View(0, new Inst(0, 7, 0, 0, 0, 0), new Inst(1, 7, 5, 0, 0, 0))))
        .containsExactly(1, 1);
    View cached = new View(0, new Inst(0, 0, 0, 0, 0, 48), new Inst(1, 0, 0, 0, 0, 48));
    assertThat(scores("precise-prefix-cache", cached)).containsExactly(1, 1);
    // the same non-zero in flight everywhere: 0 (Go BLIS's max-only normalization); none: 1
    assertThat(scores("active-requests", same)).containsExactly(0, 0);
    assertThat(scores("active-requests", new View(0, new Inst(0, 5, 5, 0, 0, 0), new Inst(1, 0, 0, 0, 0, 0))))
        .containsExactly(1, 1);
    // a single instance
    View one = new View(0, new Inst(0, 3, 3, 0.2, 3, 0));
    for (String s : GoScorers.NAMES) {
      assertThat(scores(s, one)[0]).as(s).isBetween(0.0, 1.0);
    }
    assertThat(scores("vllm-dp", one)).containsExactly(1);
    assertThat(scores("no-hit-lru", one)).containsExactly(1); // cold
  }

  @Test
  void weightsAreNormalizedToSumOneAcrossBothKindsOfScorer() {
    // Go BLIS's default profile with its queue-depth: 0.5 precise + 0.25 queue + 0.25 (1 - KV use)
    Router goDefault = Routers.weighted(ordered("precise-prefix-cache", 2.0, "queue-depth-minmax", 1.0,
        "kv-utilization", 1.0));
    double[] s = scores(goDefault, V);
    assertThat(s[0]).isCloseTo(0.5 * 0.5 + 0.25 * 0 + 0.25 * 0.5, within(1e-12));
    assertThat(s[1]).isCloseTo(0.5 * 0 + 0.25 * 1 + 0.25 * 0.75, within(1e-12));
    assertThat(s[2]).isCloseTo(0.5 * 1 + 0.25 * 0.5 + 0.25 * 0.25, within(1e-12));
    assertThat(goDefault.route(R, V)).isEqualTo(2);
    // only ratios matter: [2, 1, 1] is [0.5, 0.25, 0.25]
    assertThat(scores(Routers.weighted(ordered("precise-prefix-cache", 0.5, "queue-depth-minmax", 0.25,
        "kv-utilization", 0.25)), V)).containsExactly(s);
    // vllm-dp 3, this project's load 1 (halving at 2 requests): 0.75 vllm + 0.25 / (1 + n / 2)
    Router mixed = Routers.weighted(ordered("vllm-dp", 3.0, "load", 1.0), 2);
    double[] m = scores(mixed, V);
    // load: the larger of in flight and waiting + running: 8, 6, 3
    assertThat(m[0]).isCloseTo(0.75 * 0 + 0.25 / 5, within(1e-12));
    assertThat(m[1]).isCloseTo(0.75 * 1 + 0.25 / 4, within(1e-12));
    assertThat(m[2]).isCloseTo(0.75 * 0.75 + 0.25 / 2.5, within(1e-12));
    assertThat(mixed.route(R, V)).isEqualTo(1);
    // a zero weight leaves a scorer out
    assertThat(scores(Routers.weighted(ordered("vllm-dp", 1.0, "load-balance", 0.0)), V)).containsExactly(0, 1, 0.75);
  }

  @Test
  void noHitLruSendsColdRequestsToTheLeastRecentlyUsedAndLeavesWarmOnesToTheOthers() {
    Router r = Routers.weighted(Map.of("no-hit-lru", 1.0));
    View cold = new View(0, new Inst(0, 0, 0, 0, 0, 0), new Inst(1, 0, 0, 0, 0, 0), new Inst(2, 0, 0, 0, 0, 0));
    // never used, in view order: ranks 0, 1, 2 of 3 score 1 - r/2
    assertThat(scores(r, cold)).containsExactly(1, 0.5, 0);
    assertThat(scores(r, cold)).containsExactly(1, 0.5, 0); // scoring changes nothing
    assertThat(r.route(R, cold)).isZero();
    // never used 1, 2 first, then 0
    assertThat(scores(r, cold)).containsExactly(0, 1, 0.5);
    assertThat(r.route(R, cold)).isEqualTo(1);
    assertThat(scores(r, cold)).containsExactly(0.5, 0, 1);
    // a warm request: 0.5 everywhere, and the order is not touched
    View warm = new View(0, new Inst(0, 0, 0, 0, 0, 0), new Inst(1, 0, 0, 0, 0, 16), new Inst(2, 0, 0, 0, 0, 0));
    assertThat(scores(r, warm)).containsExactly(0.5, 0.5, 0.5);
    assertThat(r.route(R, warm)).isZero();
    assertThat(r.route(R, cold)).isEqualTo(2);
    // all used: the one used longest ago first (0, then 1, then 2)
    assertThat(scores(r, cold)).containsExactly(1, 0.5, 0);
    // instance 2 missing from the candidates: it is forgotten once a cold request is routed among 0 and 1
    View without2 = new View(0, new Inst(0, 0, 0, 0, 0, 0), new Inst(1, 0, 0, 0, 0, 0));
    assertThat(scores(r, without2)).containsExactly(1, 0);
    assertThat(r.route(R, without2)).isZero();
    // 2 is back, as never used; then 1 (used before 0)
    assertThat(scores(r, cold)).containsExactly(0, 0.5, 1);
  }

  @Test
  void prefixAffinityScoresTheShareOfTheBlocksTheRouterSentThereKeyedByInstance() {
    Router r = Routers.weighted(Map.of("prefix-affinity", 1.0));
    View v = new View(0, new Inst(0, 0, 0, 0, 0, 0), new Inst(1, 0, 0, 0, 0, 0), new Inst(2, 0, 0, 0, 0, 0));
    Req a = new Req(1, 0, 48, "standard", new long[] {11, 12, 13});
    assertThat(scores(r, v)).containsExactly(0, 0, 0); // R has no full block
    double[] s = new double[3];
    r.score(a, v, s);
    assertThat(s).containsExactly(0, 0, 0);
    r.score(a, v, s); // scoring records nothing
    assertThat(s).containsExactly(0, 0, 0);
    assertThat(r.route(a, v)).isZero(); // ties to the lowest index; the blocks are recorded for instance 0
    r.score(new Req(2, 0, 64, "standard", new long[] {11, 12, 99, 98}), v, s);
    assertThat(s).containsExactly(0.5, 0, 0); // 2 of 4 blocks lead what instance 0 was sent
    // with load-balance beside it: a cold request goes to the idle instance 1, 0.5 (0 + 1/11) < 0.5 (0 + 1)
    Router both = Routers.weighted(Map.of("prefix-affinity", 1.0, "load-balance", 1.0));
    View busy0 = new View(0, new Inst(0, 5, 5, 0, 0, 0), new Inst(1, 0, 0, 0, 0, 0));
    Req b = new Req(3, 0, 48, "standard", new long[] {21, 22, 23});
    assertThat(both.route(b, busy0)).isEqualTo(1);
    // the record follows the instance (its index), not its place among the candidates
    View swapped = new View(0, new Inst(1, 0, 0, 0, 0, 0), new Inst(0, 0, 0, 0, 0, 0));
    both.score(new Req(4, 0, 48, "standard", new long[] {21, 22, 50}), swapped, s);
    assertThat(s[0]).isCloseTo(0.5 * 2 / 3 + 0.5, within(1e-12));
    assertThat(s[1]).isEqualTo(0.5);
  }

  @Test
  void theProviderTakesGoBlissNamesAndUnknownOnesAreRefused() {
    ProviderContext ctx = new io.blis.engine.Context(null, null, null, Coefficients.empty(),
        Map.of("scorers", "precise-prefix-cache:2,queue-depth-minmax:1,kv-utilization:1,vllm-dp:1,load-aware:1,"
            + "no-hit-lru:1,prefix-affinity:1,load-balance:1,active-requests:1,running-requests:1"), 1);
    Router r = (Router) Providers.select(RouterProvider.class, "weighted").create(ctx);
    assertThat(r.route(R, V)).isBetween(0, 2);
    assertThatThrownBy(() -> Routers.weighted(Map.of("queue-scorer", 1.0)))
        .hasMessageContaining("unknown scorer 'queue-scorer'")
        .hasMessageContaining("vllm-dp").hasMessageContaining("queue-depth-minmax");
    assertThatThrownBy(() -> Routers.weighted(Map.of("vllm-dp", 0.0)))
        .hasMessageContaining("at least one scorer a positive weight");
    assertThat(WeightedScorersForTest.names()).containsAll(GoScorers.NAMES);
  }

  private static Map<String, Double> ordered(Object... kv) {
    Map<String, Double> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], (Double) kv[i + 1]);
    }
    return m;
  }
}
