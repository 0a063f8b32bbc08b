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
}
