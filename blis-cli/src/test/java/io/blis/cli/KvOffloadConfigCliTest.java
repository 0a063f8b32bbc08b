package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Go BLIS's {@code --kv-offload-config}: its CPU tier is simulated; what is not modelled is refused. */
class KvOffloadConfigCliTest {

  /** A KV cache small enough that prompts are evicted from the GPU and reloaded from the CPU tier. */
  private static final String[] RUN = {"run", "--model", "qwen/qwen3-14b", "--total-kv-blocks", "400",
      "--rate", "20", "--num-requests", "200", "--prefix-tokens", "512"};

  private static String[] with(String... extra) {
    String[] out = java.util.Arrays.copyOf(RUN, RUN.length + extra.length);
    System.arraycopy(extra, 0, out, RUN.length, extra.length);
    return out;
  }

  @Test
  void theFilesCpuTierIsTheSameAsTheFlags(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("offload.yaml");
    Files.writeString(file, """
        kv_offload:
          cpu_bytes_to_use: 17179869184
          block_size: 16
          eviction_policy: lru
          offload_prompt_only: true
          tokens_per_hash: 16
          self_describing_kv_events: false
          secondary_tiers: []
        """);
    BlisCliTest.Outcome fromFile = blis(with("--kv-offload-config", file.toString()));
    assertThat(fromFile.code()).as(fromFile.err()).isZero();
    BlisCliTest.Outcome fromFlag = blis(with("--kv-offloading-size-gib", "16"));
    assertThat(fromFile.out()).isEqualTo(fromFlag.out());
    assertThat(fromFile.out()).contains("\"kv_cpu_tier_blocks\" : ").doesNotContain("\"kv_cpu_tier_blocks\" : 0,");
    assertThat(fromFile.out()).isNotEqualTo(blis(RUN).out());
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "'  cpu_bytes_to_use: 1000000\\n  secondary_tiers:\\n    - {type: fs, root_dir: /mnt/kv}\\n'|line 4, column 5: secondary_tiers (disk or remote stores behind the CPU tier) are not modelled here",
      "'  cpu_bytes_to_use: 1000000\\n  eviction_policy: arc\\n'|eviction_policy: only lru is modelled here (got 'arc')",
      "'  cpu_bytes_to_use: 1000000\\n  offload_prompt_only: false\\n'|offload_prompt_only: false (offloading decode blocks too) is not modelled here",
      "'  cpu_bytes_to_use: 1000000\\n  block_size: 64\\n'|block_size other than the GPU's (16 tokens) is not modelled here",
      "'  cpu_bytes_to_use: 1000000\\n  block_size: 16\\n  blocks_per_chunk: 1\\n'|give block_size or blocks_per_chunk, not both",
      "'  cpu_bytes_to_use: 1000000\\n  store_threshold: 2\\n'|store_threshold must be 0 or 1",
      "'  block_size: 16\\n'|kv_offload: give cpu_bytes_to_use",
      "'  cpu_bytes_to_use: 1000000\\n  cpu_bytes: 5\\n'|cpu_bytes"})
  void whatIsNotModelledIsOneLineNamingTheFileAndKey(String body, String message, @TempDir Path dir) throws Exception {
    Path file = dir.resolve("offload.yaml");
    Files.writeString(file, "kv_offload:\n" + body.replace("\\n", "\n"));
    BlisCliTest.Outcome o = blis(with("--kv-offload-config", file.toString()));
    assertThat(o.code()).as(o.out()).isEqualTo(2);
    assertThat(o.out()).isEmpty();
    assertThat(o.err().strip().lines().count()).as(o.err()).isEqualTo(1);
    assertThat(o.err()).contains(file.toString()).contains(message);
  }

  @Test
  void theFileAndTheFlagsAreOneOrTheOther(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("offload.yaml");
    Files.writeString(file, "kv_offload:\n  cpu_bytes_to_use: 1000000\n");
    BlisCliTest.Outcome o = blis(with("--kv-offload-config", file.toString(), "--kv-cpu-blocks", "100"));
    assertThat(o.code()).isEqualTo(2);
    assertThat(o.err()).contains("--kv-offload-config sizes the CPU KV tier; give it, --kv-offloading-size-gib or"
        + " --kv-cpu-blocks, one of them");
  }
}
