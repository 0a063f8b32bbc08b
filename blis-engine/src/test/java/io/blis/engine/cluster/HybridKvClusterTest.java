package io.blis.engine.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.engine.result.SimulationResult;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A hybrid model's requests hold their recurrent states and sliding windows in the KV cache, as vLLM's. */
class HybridKvClusterTest {

  @TempDir Path dir;

  private SimulationResult one(String config, int prompt, int output) throws IOException {
    Path file = Files.writeString(dir.resolve("config.json"), config);
    int[] tokens = new int[prompt];
    for (int i = 0; i < prompt; i++) {
      tokens[i] = i + 1;
    }
    return Cluster.builder().defaults(PoolSpec.builder("default").model(file.toString()).gpu("H100").build())
        .toSimulation().source(RequestSource.of(List.of(RequestSpec.simple(1, 0, tokens, output)))).build().run();
  }

  @Test
  void aMambaHybridsRequestHoldsOneStateBlockPerRecurrentGroup() throws IOException {
    SimulationResult r = one("""
        {"model_type": "nemotron_h", "num_hidden_layers": 56, "hidden_size": 4480, "intermediate_size": 15680,
         "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 131072,
         "hybrid_override_pattern": "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-",
         "ssm_state_size": 128, "conv_kernel": 4, "n_groups": 8, "mamba_num_heads": 128, "mamba_head_dim": 80,
         "max_position_embeddings": 131072, "torch_dtype": "bfloat16"}
        """, 100, 10);
    assertThat(r.engine().blockSizeTokens()).as("vLLM's enlarged attention block").isEqualTo(672);
    assertThat(r.engine().peakUsedBlocks()).as("1 block of tokens + 7 state blocks").isEqualTo(8);
  }

  @Test
  void gemma3sSlidingGroupsHoldTheChunkBeingPrefilled() throws IOException {
    SimulationResult r = one("""
        {"model_type": "gemma3", "text_config": {"model_type": "gemma3_text", "head_dim": 128, "hidden_size": 5376,
         "intermediate_size": 21504, "num_attention_heads": 32, "num_hidden_layers": 62, "num_key_value_heads": 16,
         "sliding_window": 1024, "sliding_window_pattern": 6, "max_position_embeddings": 131072,
         "vocab_size": 262208}, "torch_dtype": "bfloat16"}
        """, 2000, 5);
    // the prefill step computes all 2000 prompt tokens: 125 blocks of 16 in the full-attention group
    // and, as vLLM's sliding-window manager allocates them, in each of the 6 sliding groups too (the
    // blocks behind the 1024-token window are freed at the next step, leaving 65 each)
    assertThat(r.engine().peakUsedBlocks()).isEqualTo(125 + 6 * 125);
  }
}
