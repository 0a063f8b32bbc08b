package io.blis.engine.spec;

import java.util.Locale;

/**
 * How drafts are proposed, by vLLM's {@code method} name in {@code --speculative-config}.
 *
 * <ul>
 *   <li>{@link #NGRAM}: prompt lookup on the CPU (no GPU work, no lookahead slots);
 *   <li>{@link #EAGLE}, {@link #EAGLE3}, {@link #MTP}: a head of the target's own shape (one decoder
 *       layer by default, with the target's LM head) run once over the step's tokens and then once
 *       per further draft; vLLM reserves {@code K} lookahead KV slots per request for them;
 *   <li>{@link #MEDUSA}: extra decoding heads over the last hidden state, charged here as a head of
 *       one layer (an over-estimate of a few MLP heads);
 *   <li>{@link #DRAFT_MODEL}: a separate smaller model's forward passes, once over the step's tokens
 *       and once per further draft; {@code K} lookahead slots as for EAGLE.
 * </ul>
 */
public enum SpeculativeMethod {
  NGRAM("ngram", false, false),
  EAGLE("eagle", true, true),
  EAGLE3("eagle3", true, true),
  MTP("mtp", true, true),
  MEDUSA("medusa", true, false),
  DRAFT_MODEL("draft_model", true, true);

  private final String vllmName;
  private final boolean gpuDrafter;
  private final boolean lookahead;

  SpeculativeMethod(String vllmName, boolean gpuDrafter, boolean lookahead) {
    this.vllmName = vllmName;
    this.gpuDrafter = gpuDrafter;
    this.lookahead = lookahead;
  }

  /** {@return vLLM's name of the method} */
  public String vllmName() {
    return vllmName;
  }

  /** {@return whether the drafts cost GPU forward passes} */
  public boolean gpuDrafter() {
    return gpuDrafter;
  }

  /** {@return whether vLLM reserves {@code K} lookahead KV slots per request for the drafter} */
  public boolean reservesLookahead() {
    return lookahead;
  }

  /** {@return whether the drafter is built from the target's own layers (not a separate model)} */
  public boolean headOfTarget() {
    return gpuDrafter && this != DRAFT_MODEL;
  }

  /**
   * The method of a name as vLLM or Go BLIS writes it: vLLM's {@code ngram}, {@code eagle}, {@code
   * eagle3}, {@code mtp} (and the per-model MTP names such as {@code deepseek_mtp}, {@code
   * qwen3_next_mtp}, {@code mimo_mtp}), {@code medusa}, {@code draft_model}; Go BLIS's {@code draft}.
   *
   * @throws IllegalArgumentException naming the accepted names
   */
  public static SpeculativeMethod of(String name) {
    String n = name == null ? "" : name.strip().toLowerCase(Locale.ROOT).replace('-', '_');
    if (n.endsWith("_mtp") || n.equals("mtp")) {
      return MTP;
    }
    return switch (n) {
      case "ngram", "prompt_lookup", "[ngram]" -> NGRAM;
      case "eagle", "eagle1" -> EAGLE;
      case "eagle3", "eagle_3" -> EAGLE3;
      case "medusa" -> MEDUSA;
      case "draft", "draft_model" -> DRAFT_MODEL;
      default -> throw new IllegalArgumentException("speculative method must be ngram, eagle, eagle3, mtp (or a"
          + " model's MTP such as deepseek_mtp), medusa, draft or draft_model, got '"
          + io.blis.latency.coeff.InputTrees.quote(String.valueOf(name)) + "'");
    };
  }
}
