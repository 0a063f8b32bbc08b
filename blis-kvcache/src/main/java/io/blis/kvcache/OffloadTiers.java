package io.blis.kvcache;

import java.util.List;
import java.util.Objects;

/**
 * The secondary offload tiers behind a pool's CPU tier, in lookup order (the first that holds a
 * block serves it), and the bytes of one block as they are copied.
 *
 * @param tiers the tiers, tier 0 looked up first; empty for none
 * @param blockBytes bytes of one KV block on one GPU (what one transfer per block moves)
 * @param generatedBlocks whether full blocks holding generated tokens are offloaded too (vLLM's
 *     {@code offload_prompt_only: false}), not only prompt blocks; they take CPU slots and tier
 *     writes, and no later request reloads them (their token ids are not known)
 */
public record OffloadTiers(List<OffloadTier> tiers, long blockBytes, boolean generatedBlocks) {

  /** No secondary tiers; prompt blocks only. */
  public static final OffloadTiers NONE = new OffloadTiers(List.of(), 1, false);

  /** Secondary tiers, prompt blocks only. */
  public OffloadTiers(List<OffloadTier> tiers, long blockBytes) {
    this(tiers, blockBytes, false);
  }

  public OffloadTiers {
    tiers = List.copyOf(Objects.requireNonNull(tiers, "tiers"));
    if (blockBytes < 1) {
      throw new IllegalArgumentException("offload tiers: block bytes must be at least 1, got " + blockBytes);
    }
  }

  /** Whether there is at least one tier. */
  public boolean any() {
    return !tiers.isEmpty();
  }
}
