package io.blis.engine.spec;

import java.util.List;

/**
 * What speculative decoding did on one instance, or summed over instances: vLLM's {@code
 * vllm:spec_decode_*} counters and the rates they give.
 *
 * @param method the drafter's method (vLLM's name)
 * @param tokens drafts per step ({@code K})
 * @param drafts verifications of at least one draft ({@code num_drafts})
 * @param draftTokens drafts verified ({@code num_draft_tokens})
 * @param acceptedTokens drafts accepted ({@code num_accepted_tokens})
 * @param acceptedPerPosition drafts accepted at each position, from the first
 */
public record SpeculativeCounts(String method, int tokens, long drafts, long draftTokens, long acceptedTokens,
    List<Long> acceptedPerPosition) {

  public SpeculativeCounts {
    acceptedPerPosition = List.copyOf(acceptedPerPosition);
  }

  /** The counts of {@code s} now. */
  public static SpeculativeCounts of(Speculator s) {
    long[] per = s.acceptedPerPosition();
    Long[] boxed = new Long[per.length];
    for (int i = 0; i < per.length; i++) {
      boxed[i] = per[i];
    }
    return new SpeculativeCounts(s.config().method().vllmName(), s.config().tokens(), s.drafts(), s.draftTokens(),
        s.acceptedTokens(), List.of(boxed));
  }

  /** These counts and {@code o}'s added (the same method and {@code K}). */
  public SpeculativeCounts plus(SpeculativeCounts o) {
    Long[] sum = new Long[Math.max(acceptedPerPosition.size(), o.acceptedPerPosition.size())];
    for (int i = 0; i < sum.length; i++) {
      sum[i] = (i < acceptedPerPosition.size() ? acceptedPerPosition.get(i) : 0L)
          + (i < o.acceptedPerPosition.size() ? o.acceptedPerPosition.get(i) : 0L);
    }
    return new SpeculativeCounts(method, Math.max(tokens, o.tokens), drafts + o.drafts, draftTokens + o.draftTokens,
        acceptedTokens + o.acceptedTokens, List.of(sum));
  }

  /** {@return accepted over verified drafts (vLLM's draft acceptance rate); 0 before any draft} */
  public double acceptanceRate() {
    return draftTokens == 0 ? 0 : (double) acceptedTokens / draftTokens;
  }

  /**
   * {@return tokens a verification emits on average: 1 + accepted drafts per verification (vLLM's
   * mean acceptance length)}
   */
  public double meanAcceptanceLength() {
    return drafts == 0 ? 1 : 1 + (double) acceptedTokens / drafts;
  }

  /** {@return each position's unconditional acceptance rate: accepted at it over verifications} */
  public double[] positionRates() {
    double[] r = new double[acceptedPerPosition.size()];
    for (int i = 0; i < r.length; i++) {
      r[i] = drafts == 0 ? 0 : (double) acceptedPerPosition.get(i) / drafts;
    }
    return r;
  }
}
