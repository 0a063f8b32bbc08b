package io.blis.cli.observe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ServerDeploymentTest {

  private static final ServerInfo VLLM = new ServerInfo(List.of("meta-llama/Llama-2-7b-hf"), 4096, "0.15.1",
      Map.of("block_size", "32", "num_gpu_blocks", "7462", "gpu_memory_utilization", "0.85"), true, 0, 1.0, List.of());
  private static final ServerInfo SILENT = new ServerInfo(List.of(), -1, null, Map.of(), false, 0, 1.0, List.of());

  @Test
  void whatTheServerTellsFillsWhatWasNotDeclaredAndEachValueSaysWhere() {
    ServerDeployment d = ServerDeployment.resolve(ServerDeployment.Declared.none(), VLLM, "meta-llama/Llama-2-7b-hf");
    assertThat(d.model()).isEqualTo("meta-llama/Llama-2-7b-hf");
    assertThat(d.simulatable()).isTrue();
    assertThat(d.maxModelLen()).isEqualTo(4096);
    assertThat(d.blockSize()).isEqualTo(32);
    assertThat(d.kvBlocksGpu()).isEqualTo(7462);
    assertThat(d.gpuMemoryUtilization()).isEqualTo(0.85);
    assertThat(d.vllmVersion()).isEqualTo("0.15.1");
    assertThat(d.gpu()).isEqualTo("H100");
    assertThat(d.sources()).containsEntry("max_model_len", "GET /v1/models")
        .containsEntry("kv_blocks_gpu", "/metrics vllm:cache_config_info")
        .containsEntry("gpu", "assumed (not given; give --gpu)")
        .containsEntry("version", "GET /version");
    assertThat(d.sources().get("max_num_seqs")).startsWith("default 256 (not given");
  }

  @Test
  void declaredValuesWin() {
    ServerDeployment d = ServerDeployment.resolve(new ServerDeployment.Declared("llama-3.1-8b", "A100-80GB", 2, 8192,
        4096, 128, 0.92, 16, 5000L, 1L << 33, "0.8.4"), VLLM, "served-name");
    assertThat(d.model()).isEqualTo("meta-llama/Llama-3.1-8B-Instruct");
    assertThat(d.gpu()).isEqualTo("A100-80GB");
    assertThat(d.gpuFile()).isNull();
    assertThat(List.of(d.tp(), d.maxModelLen(), d.maxNumBatchedTokens(), d.maxNumSeqs(), d.blockSize()))
        .containsExactly(2, 8192, 4096, 128, 16);
    assertThat(d.kvBlocksGpu()).isEqualTo(5000);
    assertThat(d.cpuOffloadBytes()).isEqualTo(1L << 33);
    assertThat(d.vllmVersion()).isEqualTo("0.8.4");
    assertThat(d.sources()).containsEntry("kv_blocks_gpu", "--total-kv-blocks").containsEntry("tp", "--tp");
  }

  @Test
  void aServedNameThatIsNotBundledIsRecordedAsNotSimulatable() {
    ServerDeployment d = ServerDeployment.resolve(ServerDeployment.Declared.none(), SILENT, "my-finetune");
    assertThat(d.model()).isEqualTo("my-finetune");
    assertThat(d.simulatable()).isFalse();
    assertThat(d.maxModelLen()).isEqualTo(4096);
    assertThat(d.kvBlocksGpu()).isEqualTo(-1);
    assertThat(d.sources().get("model")).contains("give --model CONFIG_JSON");
  }

  @Test
  void anUnknownModelOrGpuNamesTheFlag() {
    assertThatThrownBy(() -> ServerDeployment.check(new ServerDeployment.Declared("nope", null, null, null, null,
        null, null, null, null, null, null))).hasMessageStartingWith("--model: unknown model 'nope'");
    assertThatThrownBy(() -> ServerDeployment.check(new ServerDeployment.Declared(null, "nope-gpu", null, null, null,
        null, null, null, null, null, null))).hasMessageStartingWith("--gpu: ");
  }
}
