package io.blis.latency.catalog;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Locale;

/**
 * The recurrent layers of a hybrid model's HF config, and what each costs: Qwen3-Next's gated
 * delta-net (linear attention) layers, Mamba2 mixers of Nemotron-H and Granite 4.0-H. The state
 * shapes are vLLM's (its Mamba state calculator), over all tensor-parallel ranks:
 *
 * <pre>
 *   gated delta-net: conv (K - 1) x (2 Hk dk + Hv dv), recurrent Hv x dv x dk     (model dtype)
 *   Mamba2:          conv (d_conv - 1) x (I + 2 G d_state), SSM n_heads x d_head x d_state
 *                    (I = n_heads x d_head; Nemotron-H keeps its SSM state in float16)
 * </pre>
 *
 * and a layer's weights are its projections: gated delta-net {@code d (2 Hk dk + 2 Hv dv + 2 Hv) + Hv
 * dv d}, Mamba2 {@code d (2 I + 2 G d_state + n_heads) + I d}, plus the convolution's.
 *
 * @param layers recurrent layers (0: none)
 * @param stateBytes one request's state in one recurrent layer, bytes
 * @param params one recurrent layer's weights
 * @param blocks Nemotron-H's blocks ({@code hybrid_override_pattern}'s length), 0 for a model whose
 *     layers each hold a mixer and an MLP
 * @param mixerLayers Nemotron-H's blocks with a mixer (Mamba or attention)
 * @param mlpBlocks Nemotron-H's MLP blocks
 */
record Recurrent(int layers, long stateBytes, long params, int blocks, int mixerLayers, int mlpBlocks) {

  static final Recurrent NONE = new Recurrent(0, 0, 0, 0, 0, 0);

  /** The recurrent layers {@code c} describes, none for a transformer. */
  static Recurrent of(HfFields f, ObjectNode c, int layers, int hidden, int activationBytes) {
    String type = f.text("model_type");
    type = type == null ? "" : type.toLowerCase(Locale.ROOT);
    JsonNode pattern = c.get("hybrid_override_pattern");
    if (pattern != null && pattern.isTextual()) {
      return nemotronH(f, pattern.asText(), layers, hidden, activationBytes);
    }
    JsonNode types = c.get("layer_types");
    int interval = f.optionalInt(0, "full_attention_interval");
    if (f.optionalInt(0, "linear_num_value_heads") > 0) {
      int linear;
      if (types != null && types.isArray()) {
        linear = count(types, "linear_attention");
      } else if (interval > 0) {
        linear = layers - layers / interval; // layer i attends fully when (i + 1) is a multiple of it
      } else {
        throw new IllegalArgumentException("a linear-attention config (linear_num_value_heads) needs"
            + " full_attention_interval or layer_types to say which layers attend");
      }
      return gatedDeltaNet(f, linear, hidden, activationBytes);
    }
    if (types != null && types.isArray() && count(types, "mamba") > 0) {
      int mamba = count(types, "mamba");
      int heads = f.requiredInt("mamba_n_heads");
      int headDim = f.requiredInt("mamba_d_head");
      int expand = f.optionalInt(0, "mamba_expand"); // Granite 4.0-H: the mixer is mamba_expand x hidden wide
      long inner = expand > 0 ? (long) expand * hidden : (long) heads * headDim;
      return mamba2(mamba, hidden, inner, heads, headDim, f.requiredInt("mamba_n_groups"),
          f.requiredInt("mamba_d_state"), f.optionalInt(4, "mamba_d_conv"), activationBytes, activationBytes,
          0, 0, 0);
    }
    return NONE;
  }

  private static int count(JsonNode types, String kind) {
    int n = 0;
    for (JsonNode t : types) {
      if (t.asText().equalsIgnoreCase(kind)) {
        n++;
      }
    }
    return n;
  }

  private static Recurrent gatedDeltaNet(HfFields f, int linear, int hidden, int bytes) {
    long hk = f.requiredInt("linear_num_key_heads");
    long dk = f.requiredInt("linear_key_head_dim");
    long hv = f.requiredInt("linear_num_value_heads");
    long dv = f.requiredInt("linear_value_head_dim");
    long k = f.optionalInt(4, "linear_conv_kernel_dim");
    long convDim = 2 * hk * dk + hv * dv;
    long state = ((k - 1) * convDim + hv * dv * dk) * bytes;
    long params = (long) hidden * (2 * hk * dk + 2 * hv * dv + 2 * hv) + hv * dv * hidden + convDim * k;
    return new Recurrent(linear, state, params, 0, 0, 0);
  }

  private static Recurrent nemotronH(HfFields f, String pattern, int layers, int hidden, int activationBytes) {
    if (pattern.length() != layers) {
      throw new IllegalArgumentException("hybrid_override_pattern has " + pattern.length() + " blocks, but"
          + " num_hidden_layers is " + layers);
    }
    int mamba = 0;
    int attention = 0;
    int mlp = 0;
    for (char ch : pattern.toCharArray()) {
      switch (ch) {
        case 'M' -> mamba++;
        case '*' -> attention++;
        case '-' -> mlp++;
        default -> throw new IllegalArgumentException("hybrid_override_pattern: '" + ch + "' is not a block kind"
            + " (M Mamba, * attention, - MLP)");
      }
    }
    if (attention == 0) {
      throw new IllegalArgumentException("hybrid_override_pattern has no attention block ('*')");
    }
    int heads = f.requiredInt("mamba_num_heads");
    int headDim = f.requiredInt("mamba_head_dim");
    // Nemotron-H keeps its SSM state in float16 unless the config says otherwise, its conv state in the model dtype
    return mamba2(mamba, hidden, heads * headDim, heads, headDim, f.requiredInt("n_groups"),
        f.requiredInt("ssm_state_size"), f.optionalInt(4, "conv_kernel"), activationBytes, 2, layers,
        mamba + attention, mlp);
  }

  private static Recurrent mamba2(int layers, int hidden, long inner, long heads, long headDim, long groups,
      long dState, long dConv, int convBytes, int ssmBytes, int blocks, int mixers, int mlp) {
    long convDim = inner + 2 * groups * dState;
    long state = (dConv - 1) * convDim * convBytes + heads * headDim * dState * ssmBytes;
    long params = hidden * (2 * inner + 2 * groups * dState + heads) + inner * hidden + convDim * dConv;
    return new Recurrent(layers, state, params, blocks, mixers, mlp);
  }
}
