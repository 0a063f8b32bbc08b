package io.blis.engine.policy;

import io.blis.api.AdmissionDecision;
import io.blis.api.AdmissionPolicy;
import io.blis.api.AdmissionPolicyProvider;
import io.blis.api.ClusterView;
import io.blis.api.ProviderContext;
import io.blis.api.RequestView;

/** The built-in admission policies, also available by name through their providers. */
public final class Admissions {

  /** Reason of a token-bucket rejection. */
  public static final String TOKEN_BUCKET_EXHAUSTED = "token_bucket_exhausted";
  /** Reason of a reject-all rejection. */
  public static final String REJECT_ALL = "reject_all";
  /** Reason of a tier-shed rejection. */
  public static final String TIER_SHED = "tier_shed";
  /** Reason of a gaie-legacy rejection. */
  public static final String GAIE_SATURATED = "gaie_saturated";

  private Admissions() {}

  /** {@code always-admit}: every request enters. */
  public static AdmissionPolicy alwaysAdmit() {
    return (request, cluster) -> AdmissionDecision.ADMIT;
  }

  /** {@code reject-all}: every request is rejected ({@value #REJECT_ALL}). */
  public static AdmissionPolicy rejectAll() {
    return (request, cluster) -> AdmissionDecision.reject(REJECT_ALL);
  }

  /**
   * {@code token-bucket}: a bucket of {@code capacity} tokens, full at the start, refilled
   * continuously at {@code refillPerS} tokens per second up to the capacity; a request costs its
   * input tokens and is rejected ({@value #TOKEN_BUCKET_EXHAUSTED}, nothing taken) when the bucket
   * holds fewer.
   */
  public static AdmissionPolicy tokenBucket(double capacity, double refillPerS) {
    if (!(capacity > 0) || !(refillPerS >= 0) || !Double.isFinite(capacity) || !Double.isFinite(refillPerS)) {
      throw new IllegalArgumentException("token-bucket: capacity must be > 0 and the refill rate >= 0, got "
          + capacity + " and " + refillPerS);
    }
    return new TokenBucket(capacity, refillPerS);
  }

  /**
   * The Gateway API Inference Extension's priority of an SLO class: critical 4, standard 3 (and any
   * other class), batch -1, sheddable -2, background -3. Below 0 is sheddable.
   */
  public static int gaiePriority(String sloClass) {
    return switch (sloClass) {
      case "critical" -> 4;
      case "batch" -> -1;
      case "sheddable" -> -2;
      case "background" -> -3;
      default -> 3;
    };
  }

  /**
   * The Gateway API Inference Extension's pool saturation: the mean over the instances of
   * max(waiting / {@code queueThreshold}, KV use / {@code kvThreshold}); 1 for a pool without
   * instances.
   */
  public static double gaieSaturation(ClusterView cluster, double queueThreshold, double kvThreshold) {
    int n = cluster.size();
    if (n == 0) {
      return 1.0;
    }
    double sum = 0;
    for (int i = 0; i < n; i++) {
      var s = cluster.get(i);
      sum += Math.max(s.queueDepth() / queueThreshold, s.kvUtilization() / kvThreshold);
    }
    return sum / n;
  }

  /**
   * {@code gaie-legacy} (Go BLIS's, after llm-d's gateway): requests of a sheddable class (GAIE
   * priority below 0: batch, sheddable, background) are rejected ({@value #GAIE_SATURATED}) while
   * the pool's {@link #gaieSaturation} is 1 or more; the others always enter.
   */
  public static AdmissionPolicy gaieLegacy(double queueThreshold, double kvThreshold) {
    if (!(queueThreshold > 0) || !(kvThreshold > 0 && kvThreshold <= 1)) {
      throw new IllegalArgumentException("gaie-legacy: qd_threshold must be > 0 and kv_threshold in (0, 1], got "
          + queueThreshold + " and " + kvThreshold);
    }
    return (request, cluster) -> gaiePriority(request.sloClass()) < 0
        && gaieSaturation(cluster, queueThreshold, kvThreshold) >= 1.0
        ? AdmissionDecision.reject(GAIE_SATURATED) : AdmissionDecision.ADMIT;
  }

  /**
   * {@code tier-shed} (Go BLIS's): when some instance's load (waiting plus running requests) is
   * above {@code threshold}, requests whose class has a GAIE priority below {@code minPriority} are
   * rejected ({@value #TIER_SHED}); with the default 3, batch, sheddable and background.
   */
  public static AdmissionPolicy tierShed(int threshold, int minPriority) {
    if (threshold < 0) {
      throw new IllegalArgumentException("tier-shed: threshold must be >= 0, got " + threshold);
    }
    return (request, cluster) -> {
      if (gaiePriority(request.sloClass()) >= minPriority) {
        return AdmissionDecision.ADMIT;
      }
      for (int i = 0; i < cluster.size(); i++) {
        var s = cluster.get(i);
        if (s.queueDepth() + s.runningBatchSize() > threshold) {
          return AdmissionDecision.reject(TIER_SHED);
        }
      }
      return AdmissionDecision.ADMIT;
    };
  }

  private static final class TokenBucket implements AdmissionPolicy {
    private final double capacity;
    private final double refillPerUs;
    private double tokens;
    private long lastUs = Long.MIN_VALUE;

    TokenBucket(double capacity, double refillPerS) {
      this.capacity = capacity;
      this.refillPerUs = refillPerS / 1e6;
      this.tokens = capacity;
    }

    @Override
    public AdmissionDecision admit(RequestView request, ClusterView cluster) {
      long now = cluster.nowUs();
      if (lastUs != Long.MIN_VALUE && now > lastUs) {
        tokens = Math.min(capacity, tokens + (now - lastUs) * refillPerUs);
      }
      lastUs = Math.max(lastUs, now);
      int cost = request.inputTokens();
      if (cost > tokens) {
        return AdmissionDecision.reject(TOKEN_BUCKET_EXHAUSTED);
      }
      tokens -= cost;
      return AdmissionDecision.ADMIT;
    }
  }

  /** Provides {@code always-admit}. */
  public static final class AlwaysAdmitProvider implements AdmissionPolicyProvider {
    @Override
    public String name() {
      return "always-admit";
    }

    @Override
    public String description() {
      return "admits every request";
    }

    @Override
    public AdmissionPolicy create(ProviderContext context) {
      Params.of(name(), context.options());
      return alwaysAdmit();
    }
  }

  /** Provides {@code reject-all}. */
  public static final class RejectAllProvider implements AdmissionPolicyProvider {
    @Override
    public String name() {
      return "reject-all";
    }

    @Override
    public String description() {
      return "pathological: rejects every request";
    }

    @Override
    public AdmissionPolicy create(ProviderContext context) {
      Params.of(name(), context.options());
      return rejectAll();
    }
  }

  /** Provides {@code token-bucket}; parameters capacity (10000) and refill_rate (1000 per s). */
  public static final class TokenBucketProvider implements AdmissionPolicyProvider {
    @Override
    public String name() {
      return "token-bucket";
    }

    @Override
    public String description() {
      return "input tokens drawn from a bucket of capacity tokens refilled at refill_rate per second";
    }

    @Override
    public AdmissionPolicy create(ProviderContext context) {
      Params p = Params.of(name(), context.options(), "capacity", "refill_rate");
      double capacity = p.positive("capacity", 10_000);
      return tokenBucket(capacity, p.number("refill_rate", 1_000, 0));
    }
  }

  /** Provides {@code gaie-legacy}: parameters qd_threshold (5) and kv_threshold (0.8). */
  public static final class GaieLegacyProvider implements AdmissionPolicyProvider {
    @Override
    public String name() {
      return "gaie-legacy";
    }

    @Override
    public String description() {
      return "rejects batch, sheddable and background requests while the GAIE pool saturation is 1 or more";
    }

    @Override
    public AdmissionPolicy create(ProviderContext context) {
      Params p = Params.of(name(), context.options(), "qd_threshold", "kv_threshold");
      return gaieLegacy(p.positive("qd_threshold", 5), p.positive("kv_threshold", 0.8));
    }
  }

  /** Provides {@code tier-shed}: parameters threshold (0) and min_priority (3). */
  public static final class TierShedProvider implements AdmissionPolicyProvider {
    @Override
    public String name() {
      return "tier-shed";
    }

    @Override
    public String description() {
      return "rejects classes below min_priority (GAIE priorities) while an instance's load is above threshold";
    }

    @Override
    public AdmissionPolicy create(ProviderContext context) {
      Params p = Params.of(name(), context.options(), "threshold", "min_priority");
      return tierShed(p.integer("threshold", 0, 0), p.integer("min_priority", 3, Integer.MIN_VALUE));
    }
  }
}
