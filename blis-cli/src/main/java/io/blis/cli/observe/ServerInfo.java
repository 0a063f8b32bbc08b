package io.blis.cli.observe;

import java.util.List;
import java.util.Map;

/**
 * What {@link Observer#probe()} learned of a server before the run.
 *
 * @param models the model names {@code GET /v1/models} listed (empty when it gave none)
 * @param maxModelLen the served model's {@code max_model_len} from that list, -1 when not given
 * @param version the server's {@code GET /version}, null when it has none
 * @param cacheConfig the labels of {@code vllm:cache_config_info} (block_size, num_gpu_blocks,
 *     gpu_memory_utilization, ...), empty when the metrics do not give them
 * @param metrics whether the Prometheus endpoint answered with vLLM's metrics
 * @param textOverheadTokens tokens the server adds to a text prompt (BOS, chat template), 0 for
 *     token ids
 * @param tokensPerWord tokens the server counted per word of a text prompt (1 when exact), 1 for
 *     token ids
 * @param notes what could not be learned and why, one sentence each
 * @param warnings what the server answered that is not recorded as it gave it (a field of the
 *     wrong type or out of range, a version too long), one line each starting {@code "warning: "}
 */
public record ServerInfo(List<String> models, int maxModelLen, String version,
    Map<String, String> cacheConfig, boolean metrics, int textOverheadTokens, double tokensPerWord,
    List<String> notes, List<String> warnings) {

  public ServerInfo {
    models = List.copyOf(models);
    cacheConfig = Map.copyOf(cacheConfig);
    notes = List.copyOf(notes);
    warnings = List.copyOf(warnings);
  }

  /** Without warnings. */
  public ServerInfo(List<String> models, int maxModelLen, String version, Map<String, String> cacheConfig,
      boolean metrics, int textOverheadTokens, double tokensPerWord, List<String> notes) {
    this(models, maxModelLen, version, cacheConfig, metrics, textOverheadTokens, tokensPerWord, notes, List.of());
  }

  /** A number label of {@code vllm:cache_config_info}, or NaN when absent, not a number or not finite. */
  public double cacheConfigDouble(String label) {
    String v = cacheConfig.get(label);
    if (v == null) {
      return Double.NaN;
    }
    try {
      double d = Double.parseDouble(v.strip());
      return Double.isFinite(d) ? d : Double.NaN;
    } catch (NumberFormatException e) {
      return Double.NaN;
    }
  }
}
