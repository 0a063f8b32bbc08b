package io.blis.engine.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.api.AdmissionPolicy;
import io.blis.api.AdmissionPolicyProvider;
import io.blis.api.Coefficients;
import io.blis.api.PriorityPolicy;
import io.blis.api.PriorityPolicyProvider;
import io.blis.api.ProviderContext;
import io.blis.api.Providers;
import io.blis.api.RequestView;
import io.blis.api.Router;
import io.blis.api.RouterProvider;
import io.blis.api.SchedulerProvider;
import java.util.Map;
import io.blis.engine.TestViews.Inst;
import io.blis.engine.TestViews.View;
import org.junit.jupiter.api.Test;

/** Hand-computed cases of the built-in policies. */
class PoliciesTest {

  public record Req(long id, long arrivalTimeUs, int inputTokens, String sloClass, long[] hashes)
      implements RequestView {
    Req(long id, long arrivalTimeUs, int inputTokens, String sloClass) {
      this(id, arrivalTimeUs, inputTokens, sloClass, new long[0]);
    }

    @Override
    public int progressIndex() {
      return 0;
    }

    @Override
    public int newTokens() {
      return 0;
    }

    @Override
    public int generatedTokens() {
      return 0;
    }

    @Override
    public io.blis.api.Phase phase() {
      return io.blis.api.Phase.PREFILL;
    }

    @Override
    public int priority() {
      return 1;
    }

    @Override
    public String tenant() {
      return "";
    }

    @Override
    public long[] promptBlockHashes(int blockSizeTokens) {
      return hashes;
    }
  }

  private static final Req R = new Req(1, 0, 100, "standard");

  @Test
  void leastLoadedAndAlwaysBusiestCountQueueRunningAndInFlightWithTiesToTheLowestIndex() {
    View v = new View(0, new Inst(0, 2, 3, 0, 1, 0), new Inst(1, 0, 1, 0, 5, 0),
        new Inst(2, 1, 1, 0, 4, 0), new Inst(3, 0, 0, 0, 9, 0));
    // loads 6, 6, 6, 9
    assertThat(Routers.leastLoaded().route(R, v)).isZero();
    assertThat(Routers.alwaysBusiest().route(R, v)).isEqualTo(3);
    double[] scores = new double[4];
    assertThat(Routers.leastLoaded().score(R, v, scores)).isTrue();
    assertThat(scores).containsExactly(-6, -6, -6, -9);
  }

  @Test
  void weightedScoresEachInstanceOnItsOwn() {
    // the request has 100 prompt tokens
    View v = new View(0, new Inst(0, 4, 0, 0.5, 2, 0), new Inst(1, 0, 0, 0.9, 6, 64),
        new Inst(2, 2, 0, 0.1, 4, 32));
    Router r = Routers.weighted(Map.of("prefix-cache", 2.0, "queue-depth", 1.0, "kv-utilization", 1.0));
    double[] s = new double[3];
    r.score(R, v, s);
    // weights 0.5, 0.25, 0.25; prefix = cached / prompt: 0, 0.64, 0.32; queue 1 / (1 + q / 32):
    // 32/36, 1, 32/34; kv 1 - use: 0.5, 0.1, 0.9
    assertThat(s[0]).isCloseTo(0.25 * 32 / 36 + 0.125, org.assertj.core.data.Offset.offset(1e-12));
    assertThat(s[1]).isCloseTo(0.32 + 0.25 + 0.025, org.assertj.core.data.Offset.offset(1e-12));
    assertThat(s[2]).isCloseTo(0.16 + 0.25 * 32 / 34 + 0.225, org.assertj.core.data.Offset.offset(1e-12));
    assertThat(r.route(R, v)).isEqualTo(2);
    // load: the larger of in flight and waiting + running, halving at half_load (here 2)
    Router load = Routers.weighted(Map.of("load", 1.0), 2);
    load.score(R, v, s);
    assertThat(s).containsExactly(1.0 / 3, 1.0 / 4, 1.0 / 3);
    assertThat(load.route(R, v)).isZero();
    View queued = new View(0, new Inst(0, 9, 1, 0, 3, 0));
    load.score(R, queued, s);
    assertThat(s[0]).isEqualTo(1.0 / 6);
  }

  @Test
  void aScoreDoesNotDependOnTheOtherInstances() {
    // min-max scaling made a queue of 1 against 0 worth as much as 1,000 against 0; an instance's
    // own score now depends on its own figures only
    Router q = Routers.weighted(Map.of("queue-depth", 1.0));
    double[] s = new double[3];
    q.score(R, new View(0, new Inst(0, 0, 0, 0, 0, 0), new Inst(1, 1, 0, 0, 0, 0), new Inst(2, 1000, 0, 0, 0, 0)), s);
    double one = s[1];
    double thousand = s[2];
    assertThat(s[0]).isEqualTo(1.0);
    assertThat(one).isGreaterThan(0.95);
    assertThat(thousand).isLessThan(0.05);
    q.score(R, new View(0, new Inst(0, 1, 0, 0, 0, 0), new Inst(1, 500, 0, 0, 0, 0)), s);
    assertThat(s[0]).isEqualTo(one);
    // one cached block more is worth its share of the prompt, not a whole point
    Router p = Routers.weighted(Map.of("prefix-cache", 1.0));
    p.score(R, new View(0, new Inst(0, 0, 0, 0, 0, 0), new Inst(1, 0, 0, 0, 0, 16)), s);
    assertThat(s[0]).isZero();
    assertThat(s[1]).isEqualTo(0.16);
    // equal instances score equal, ties to the lowest index
    Router inFlightOnly = Routers.weighted(Map.of("in-flight", 3.0));
    View equal = new View(0, new Inst(0, 1, 0, 0, 1, 0), new Inst(1, 1, 0, 0, 1, 0));
    inFlightOnly.score(R, equal, s);
    assertThat(s[0]).isEqualTo(s[1]).isEqualTo(32.0 / 33);
    assertThat(inFlightOnly.route(R, equal)).isZero();
  }

  @Test
  void anAliasSelectsItsProviderAndListingsShowTheNameOnly() {
    assertThat(Providers.select(PriorityPolicyProvider.class, "inverted-slo").name()).isEqualTo("inverted");
    assertThat(Providers.canonicalName(PriorityPolicyProvider.class, "inverted-slo")).isEqualTo("inverted");
    assertThat(Providers.canonicalName(PriorityPolicyProvider.class, "no-such")).isEqualTo("no-such");
    assertThat(Providers.names(PriorityPolicyProvider.class)).contains("inverted").doesNotContain("inverted-slo");
  }

  @Test
  void theHalfLoadIsAnEighthOfTheBatchLimitOrAParameter() {
    assertThat(Weighted.halfLoad(256)).isEqualTo(32);
    assertThat(Weighted.halfLoad(128)).isEqualTo(16);
    assertThat(Weighted.halfLoad(4)).isEqualTo(1);
    assertThat(Weighted.halfLoad(0)).isEqualTo(Weighted.DEFAULT_HALF_LOAD);
    Router viaParam = (Router) create(RouterProvider.class, "weighted", Map.of("scorers", "load:1", "half_load", "4"));
    double[] s = new double[1];
    viaParam.score(R, new View(0, new Inst(0, 0, 0, 0, 4, 0)), s);
    assertThat(s[0]).isEqualTo(0.5);
    assertThatThrownBy(() -> create(RouterProvider.class, "weighted", Map.of("half_load", "0")))
        .hasMessageContaining("half_load");
  }

  @Test
  void weightedRejectsUnknownScorersAndBadWeights() {
    assertThatThrownBy(() -> Routers.weighted(Map.of("latency", 1.0)))
        .hasMessageContaining("unknown scorer 'latency'").hasMessageContaining("queue-depth");
    assertThatThrownBy(() -> Routers.weighted(Map.of("queue-depth", -1.0)))
        .hasMessageContaining("queue-depth must be a finite number >= 0");
    assertThatThrownBy(() -> Routers.weighted(Map.of("queue-depth", 0.0)))
        .hasMessageContaining("at least one scorer a positive weight");
    assertThatThrownBy(() -> create(RouterProvider.class, "weighted", Map.of("scorers", "queue-depth=1")))
        .hasMessageContaining("name:weight");
  }

  @Test
  void prefixAffinityFollowsThePrefixAndFallsBackToLeastLoaded() {
    Router r = Routers.prefixAffinity(16, 3, 1);
    View v = new View(0, new Inst(0, 0, 0, 0, 0, 0), new Inst(1, 0, 0, 0, 0, 0),
        new Inst(2, 0, 0, 0, 0, 0));
    Req a = new Req(1, 0, 48, "standard", new long[] {11, 12, 13});
    assertThat(r.route(a, v)).isZero(); // cold: least loaded, lowest index
    View busy0 = new View(0, new Inst(0, 5, 0, 0, 5, 0), new Inst(1, 0, 0, 0, 0, 0),
        new Inst(2, 0, 0, 0, 0, 0));
    Req sharing = new Req(2, 0, 48, "standard", new long[] {11, 12, 99});
    assertThat(r.route(sharing, busy0)).isZero(); // two leading blocks match instance 0
    Req cold = new Req(3, 0, 48, "standard", new long[] {21, 22, 23});
    assertThat(r.route(cold, busy0)).isEqualTo(1);
    double[] s = new double[3];
    r.score(new Req(4, 0, 48, "standard", new long[] {11, 12, 13}), busy0, s);
    assertThat(s).containsExactly(2.0 / 3, 0, 0); // 13 was evicted by 99 (capacity 3 per instance)
  }

  @Test
  void prefixAffinityEvictsTheEndsOfPrefixesBeforeTheirStarts() {
    // capacity 4: a 3-block prefix, then a cold 2-block request to the same (only) instance
    Router r = Routers.prefixAffinity(16, 4, 1);
    View one = new View(0, new Inst(0, 0, 0, 0, 0, 0));
    r.route(new Req(1, 0, 48, "standard", new long[] {1, 2, 3}), one);
    r.route(new Req(2, 0, 32, "standard", new long[] {7, 8}), one);
    double[] s = new double[1];
    // block 3 (the end) went first; blocks 1 and 2 still match
    r.score(new Req(3, 0, 48, "standard", new long[] {1, 2, 3}), one, s);
    assertThat(s[0]).isEqualTo(2.0 / 3);
  }

  @Test
  void tokenBucketAdmitsUntilEmptyThenRefills() {
    AdmissionPolicy tb = Admissions.tokenBucket(1000, 500);
    Req r400 = new Req(1, 0, 400, "standard");
    assertThat(tb.admit(r400, new View(0)).admitted()).isTrue();   // 600 left
    assertThat(tb.admit(r400, new View(0)).admitted()).isTrue();   // 200 left
    assertThat(tb.admit(r400, new View(0)).reason()).isEqualTo("token_bucket_exhausted");
    assertThat(tb.admit(r400, new View(399_999)).admitted()).isFalse(); // 399.9995 < 400
    assertThat(tb.admit(r400, new View(400_000)).admitted()).isTrue();  // 400 at 0.4 s
    assertThat(tb.admit(new Req(2, 0, 1, "standard"), new View(400_000)).admitted()).isFalse();
    assertThat(tb.admit(new Req(3, 0, 1000, "standard"), new View(10_000_000)).admitted()).isTrue();
    assertThat(Admissions.rejectAll().admit(R, new View(0)).reason()).isEqualTo("reject_all");
  }

  @Test
  void prioritiesFollowTheSloClassAgeAndInversion() {
    PriorityPolicy slo = Priorities.sloBased(0);
    assertThat(slo.priority(new Req(1, 0, 1, "critical"), 0)).isZero();
    assertThat(slo.priority(new Req(1, 0, 1, "background"), 10_000_000)).isEqualTo(7);
    assertThat(slo.priority(new Req(1, 0, 1, "someone-else"), 0)).isEqualTo(1);
    assertThat(slo.timeDependent()).isFalse();
    PriorityPolicy aging = Priorities.sloBased(100);
    assertThat(aging.timeDependent()).isTrue();
    Req batch = new Req(1, 1_000_000, 1, "batch");
    assertThat(aging.priority(batch, 1_099_999)).isEqualTo(5);
    assertThat(aging.priority(batch, 1_200_000)).isEqualTo(3);
    assertThat(aging.priority(batch, 9_000_000)).isEqualTo(1);
    assertThat(aging.priority(new Req(1, 0, 1, "critical"), 9_000_000)).isZero();
    assertThat(Priorities.inverted().priority(new Req(1, 0, 1, "critical"), 0)).isEqualTo(7);
    assertThat(Priorities.inverted().priority(new Req(1, 0, 1, "background"), 0)).isZero();
    assertThat(Priorities.constant(4).priority(new Req(1, 0, 1, "critical"), 0)).isEqualTo(4);
  }

  private static Object create(Class<?> type, String name, Map<String, String> options) {
    ProviderContext ctx = new io.blis.engine.Context(null, null, null, Coefficients.empty(), options, 1);
    if (type == RouterProvider.class) {
      return Providers.select(RouterProvider.class, name).create(ctx);
    }
    if (type == AdmissionPolicyProvider.class) {
      return Providers.select(AdmissionPolicyProvider.class, name).create(ctx);
    }
    if (type == PriorityPolicyProvider.class) {
      return Providers.select(PriorityPolicyProvider.class, name).create(ctx);
    }
    return Providers.select(SchedulerProvider.class, name).create(ctx);
  }

  @Test
  void everyBuiltInIsFoundByNameAndRejectsUnknownParameters() {
    assertThat(Providers.names(RouterProvider.class)).contains("round-robin", "least-loaded",
        "weighted", "prefix-affinity", "always-busiest");
    assertThat(Providers.names(AdmissionPolicyProvider.class)).contains("always-admit",
        "token-bucket", "reject-all");
    assertThat(Providers.names(PriorityPolicyProvider.class)).contains("slo-based", "constant",
        "inverted");
    assertThat(Providers.names(SchedulerProvider.class)).contains("reverse-priority");
    assertThat(create(AdmissionPolicyProvider.class, "token-bucket",
        Map.of("capacity", "10", "refill_rate", "0"))).isNotNull();
    assertThatThrownBy(() -> create(AdmissionPolicyProvider.class, "token-bucket",
        Map.of("size", "10"))).hasMessageContaining("token-bucket: unknown parameter 'size'")
        .hasMessageContaining("capacity, refill_rate");
    assertThatThrownBy(() -> create(AdmissionPolicyProvider.class, "token-bucket",
        Map.of("capacity", "lots"))).hasMessageContaining("capacity must be a number, got 'lots'");
    assertThatThrownBy(() -> create(RouterProvider.class, "prefix-affinity",
        Map.of("block_size", "0"))).hasMessageContaining("block_size must be a whole number >= 1");
    assertThatThrownBy(() -> create(PriorityPolicyProvider.class, "slo-based",
        Map.of("aging_ms", "-1"))).hasMessageContaining("aging_ms must be a finite number >= 0");
    assertThatThrownBy(() -> create(RouterProvider.class, "round-robin", Map.of("x", "1")))
        .hasMessageContaining("accepted: none");
  }
}
