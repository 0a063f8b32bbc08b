package io.blis.engine.spec;

import java.util.SplittableRandom;

/**
 * One instance's speculative decoding at run time: what the engine asks of it (drafts to verify,
 * lookahead slots to reserve, drafts a verification keeps) and what it counts, as vLLM's {@code
 * vllm:spec_decode_*} counters do. One per simulated instance; not thread-safe.
 */
public final class Speculator {

  private final SpeculativeConfig config;
  private final SplittableRandom rng;
  private final int lookahead;
  private long drafts;
  private long draftTokens;
  private long acceptedTokens;
  private final long[] acceptedPerPosition;

  /**
   * @param config the deployment's speculative decoding
   * @param seed the simulation's seed
   * @param instance the instance's index (each instance draws its own sequence)
   */
  public Speculator(SpeculativeConfig config, long seed, int instance) {
    this.config = java.util.Objects.requireNonNull(config, "config");
    // one stream per instance, fixed by the seed: the same inputs give the same draws
    this.rng = new SplittableRandom(seed ^ (0x9E3779B97F4A7C15L * (instance + 1L)));
    this.acceptedPerPosition = new long[config.tokens()];
    this.lookahead = config.lookaheadSlots();
  }

  /** {@return the deployment's speculative decoding} */
  public SpeculativeConfig config() {
    return config;
  }

  /**
   * The tokens a decoding request schedules this step: its last token and the drafts proposed for
   * it, within the step's remaining token budget and the model's length limit (vLLM trims the
   * drafts, never the request's own token).
   *
   * @param budget tokens left in the step, at least 1
   * @param roomInModel tokens the request may still compute before {@code max_model_len} (0 or
   *     less: no limit)
   */
  public int decodeTokens(int budget, int roomInModel) {
    int n = 1 + config.tokens();
    n = Math.min(n, budget);
    if (roomInModel > 0) {
      n = Math.min(n, roomInModel);
    }
    return Math.max(1, n);
  }

  /** {@return the lookahead slots a request reserves past the tokens it schedules} */
  public int lookaheadSlots() {
    return lookahead;
  }

  /**
   * Draws how many of a verification's {@code proposed} drafts of {@code request} are accepted, with
   * its workload's acceptance ({@link SpeculativeConfig#acceptanceFor}), and counts them.
   *
   * @param proposed drafts verified (0 to {@code K})
   * @return accepted drafts, 0 to {@code proposed}
   */
  public int accept(io.blis.api.RequestView request, int proposed) {
    return accept(config.acceptanceFor(request.tenant(), request.sloClass()), proposed);
  }

  private int accept(AcceptanceProfile profile, int proposed) {
    if (proposed <= 0) {
      return 0;
    }
    int kept = profile.draw(rng, proposed);
    drafts++;
    draftTokens += proposed;
    acceptedTokens += kept;
    for (int i = 0; i < kept; i++) {
      acceptedPerPosition[i]++;
    }
    return kept;
  }

  /** {@return verifications of at least one draft so far (vLLM's {@code num_drafts})} */
  public long drafts() {
    return drafts;
  }

  /** {@return drafts verified so far ({@code num_draft_tokens})} */
  public long draftTokens() {
    return draftTokens;
  }

  /** {@return drafts accepted so far ({@code num_accepted_tokens})} */
  public long acceptedTokens() {
    return acceptedTokens;
  }

  /** {@return drafts accepted at each position so far ({@code num_accepted_tokens_per_pos})} */
  public long[] acceptedPerPosition() {
    return acceptedPerPosition.clone();
  }
}
