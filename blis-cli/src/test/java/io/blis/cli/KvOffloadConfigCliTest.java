package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Go BLIS's {@code --kv-offload-config}: its CPU tier and disk tiers are simulated; what is not modelled is refused. */
class KvOffloadConfigCliTest {

  /** A KV cache small enough that prompts are evicted from the GPU and reloaded from the CPU tier. */
  private static final String[] RUN = {"run", "--model", "qwen/qwen3-14b", "--total-kv-blocks", "400",
      "--rate", "20", "--num-requests", "200", "--prefix-tokens", "512"};

  private static String[] with(String... extra) {
    return with(RUN, extra);
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
      "'  cpu_bytes_to_use: 1000000\\n  secondary_tiers:\\n    - {type: fs, root_dir: /mnt/kv}\\n'|line 4, column 7: secondary_tiers[0]: give direct_io (true or false)",
      "'  cpu_bytes_to_use: 1000000\\n  secondary_tiers:\\n    - {type: obj, root_dir: /mnt/kv}\\n'|secondary_tiers[0].type 'obj' is not modelled here; the one tier type is fs",
      "'  cpu_bytes_to_use: 1000000\\n  secondary_tiers:\\n    - {type: fs, direct_io: true}\\n'|secondary_tiers[0]: give root_dir",
      "'  cpu_bytes_to_use: 1000000\\n  secondary_tiers:\\n    - {type: fs, root_dir: /k, direct_io: true, device_class: floppy}\\n'|secondary_tiers[0].device_class 'floppy' is not known; known: nvme_gen4, nvme_gen3, sata_ssd, cpu_dram, s3",
      "'  cpu_bytes_to_use: 1000000\\n  secondary_tiers:\\n    - {type: fs, root_dir: /k, direct_io: true, read_bandwidth: 100}\\n'|give device_class, or read_bandwidth, write_bandwidth (bytes per microsecond) and base_latency",
      "'  cpu_bytes_to_use: 1000000\\n  secondary_tiers:\\n    - {type: fs, root_dir: /k, direct_io: true, device_class: s3, n_read_threads: 0}\\n'|n_read_threads",
      "'  cpu_bytes_to_use: 0\\n  secondary_tiers:\\n    - {type: fs, root_dir: /k, direct_io: true, device_class: s3}\\n'|cpu_bytes_to_use must be above 0 with secondary_tiers",
      "'  cpu_bytes_to_use: 1000000\\n  eviction_policy: arc\\n'|eviction_policy: only lru is modelled here (got 'arc')",
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

  /** Eight prefix groups of 1,024 tokens taken in turn: 300 requests at 10 req/s (prompts of 1,088 tokens). */
  private static Path groups(Path dir) throws Exception {
    StringBuilder spec = new StringBuilder("version: \"2\"\nseed: 7\naggregate_rate: 10.0\nnum_requests: 300\nclients:\n");
    for (int g = 0; g < 8; g++) {
      spec.append("  - id: c").append(g).append("\n    rate_fraction: 0.125\n    prefix_group: g").append(g)
          .append("\n    prefix_length: 1024\n    arrival: {process: poisson}\n")
          .append("    input_distribution: {type: constant, params: {value: 64}}\n")
          .append("    output_distribution: {type: constant, params: {value: 32}}\n");
    }
    return Files.writeString(dir.resolve("groups.yaml"), spec.toString());
  }

  private static final String CPU_100_BLOCKS = "kv_offload:\n  cpu_bytes_to_use: 262144000\n"; // 100 blocks of Qwen3-14B

  private static Path disk(Path dir) throws Exception {
    return Files.writeString(dir.resolve("disk.yaml"), CPU_100_BLOCKS + """
          secondary_tiers:
            - type: fs
              root_dir: /mnt/kv-cache
              n_read_threads: 16
              n_write_threads: 16
              locality: LOCAL
              direct_io: true
              device_class: nvme_gen4
        """);
  }

  private static com.fasterxml.jackson.databind.JsonNode json(BlisCliTest.Outcome o) throws Exception {
    assertThat(o.code()).as(o.err()).isZero();
    return new com.fasterxml.jackson.databind.ObjectMapper().readTree(o.out());
  }

  /**
   * 400 GPU blocks and a CPU tier of 100 hold none of the eight prefixes until its next use; a disk
   * behind the CPU tier holds them all.
   */
  @Test
  void aDiskBehindTheCpuTierServesPrefixesTheCpuTierLost(@TempDir Path dir) throws Exception {
    Path cpuOnly = Files.writeString(dir.resolve("cpu.yaml"), CPU_100_BLOCKS);
    Path disk = disk(dir);
    String[] run = {"run", "--model", "qwen/qwen3-14b", "--total-kv-blocks", "400", "--workload-spec",
        groups(dir).toString(), "--kv-offload-config"};
    com.fasterxml.jackson.databind.JsonNode ja = json(blis(with(run, cpuOnly.toString())));
    BlisCliTest.Outcome b = blis(with(run, disk.toString()));
    com.fasterxml.jackson.databind.JsonNode jb = json(b);
    assertThat(ja.at("/engine/kv_cpu_tier_blocks").asLong()).isEqualTo(100);
    assertThat(ja.at("/engine/kv_cpu_loaded_blocks").asLong()).isZero();
    assertThat(ja.at("/engine/kv_secondary_tiers").isMissingNode()).isTrue();
    assertThat(jb.at("/engine/kv_secondary_tiers").asInt()).isEqualTo(1);
    assertThat(jb.at("/engine/kv_secondary_read_blocks").asLong()).isGreaterThan(1000);
    assertThat(jb.at("/engine/kv_cpu_loaded_blocks").asLong()).isGreaterThan(1000);
    // reading 64 blocks (168 MB at 7 GB/s) and loading them beats recomputing 1,024 tokens
    assertThat(jb.at("/overall/ttft_ms/mean").asDouble()).isLessThan(0.8 * ja.at("/overall/ttft_ms/mean").asDouble());
    assertThat(blis(with(run, disk.toString())).out()).isEqualTo(b.out());
  }

  /** offload_prompt_only: false offloads generated blocks too: more writes, a note saying none is reloaded. */
  @Test
  void generatedBlocksAreOffloadedWithANote(@TempDir Path dir) throws Exception {
    Path disk = disk(dir);
    Path decode = Files.writeString(dir.resolve("decode.yaml"),
        Files.readString(disk).replace("  secondary_tiers:", "  offload_prompt_only: false\n  secondary_tiers:"));
    String[] run = {"run", "--model", "qwen/qwen3-14b", "--total-kv-blocks", "400", "--workload-spec",
        groups(dir).toString(), "--kv-offload-config"};
    com.fasterxml.jackson.databind.JsonNode prompts = json(blis(with(run, disk.toString())));
    BlisCliTest.Outcome o = blis(with(run, decode.toString()));
    com.fasterxml.jackson.databind.JsonNode all = json(o);
    assertThat(o.err()).contains("note: " + decode + ": offload_prompt_only: false: full blocks of generated tokens"
        + " are offloaded too");
    // prompts of 1,088 tokens fill 68 blocks; the KV of 31 of the 32 generated tokens (the last is
    // never fed back) fills one more: a block per request to write, 300 at most (fewer when a store
    // finds every CPU slot held by a write)
    long more = all.at("/engine/kv_secondary_written_blocks").asLong()
        - prompts.at("/engine/kv_secondary_written_blocks").asLong();
    assertThat(more).isBetween(250L, 300L);
  }

  /** Go BLIS's run --trace-output records the offload configuration, and its replay applies it. */
  @Test
  void aTraceOutputRecordsTheOffloadConfigurationAndItsReplayAppliesIt(@TempDir Path dir) throws Exception {
    Path disk = disk(dir);
    Path prefix = dir.resolve("out/tr");
    String[] run = {"run", "--model", "qwen/qwen3-14b", "--total-kv-blocks", "400", "--workload-spec",
        groups(dir).toString(), "--kv-offload-config", disk.toString()};
    BlisCliTest.Outcome plain = blis(run);
    BlisCliTest.Outcome traced = blis(with(run, "--trace-output", prefix.toString()));
    assertThat(traced.out()).as(traced.err()).isEqualTo(plain.out()); // the files add no records to the result
    String header = Files.readString(dir.resolve("out/tr.yaml"));
    assertThat(header).contains("mode: generated\n", "workload_seed: 7\n", "kv_offload:\n",
        "    cpu_bytes_to_use: 262144000\n    per_block_bytes: 2621440\n",
        "        - type: fs\n          root_dir: /mnt/kv-cache\n", "          device_class: nvme_gen4\n",
        "          read_bandwidth: 7000\n          write_bandwidth: 5000\n          base_latency: 80\n");
    java.util.List<String> rows = Files.readAllLines(dir.resolve("out/tr.csv"));
    assertThat(rows).hasSize(301);
    assertThat(rows.get(1)).matches("0,,,standard,,0,g\\d,1024,false,64,32,0,0,0,0,0,,0,0,(\\d+),\\1,\\d+,\\d+,32,ok,,");

    String[] replay = {"replay", "--trace-header", prefix + ".yaml", "--trace-data", prefix + ".csv", "--model",
        "qwen/qwen3-14b", "--total-kv-blocks", "400"};
    BlisCliTest.Outcome replayed = blis(replay);
    assertThat(replayed.err()).doesNotContain("kv_offload").doesNotContain("network");
    com.fasterxml.jackson.databind.JsonNode r = json(replayed);
    com.fasterxml.jackson.databind.JsonNode p = json(plain);
    assertThat(r.at("/engine/kv_secondary_tiers").asInt()).isEqualTo(1);
    // the rows keep each prompt's group and lengths: the replay is the run again
    assertThat(r.at("/overall/ttft_ms")).isEqualTo(p.at("/overall/ttft_ms"));
    assertThat(r.at("/engine/kv_secondary_read_blocks")).isEqualTo(p.at("/engine/kv_secondary_read_blocks"));
    assertThat(blis(with(replay, "--kv-offload-config", disk.toString())).out()).isEqualTo(replayed.out());

    Path cpuOnly = Files.writeString(dir.resolve("cpu.yaml"), CPU_100_BLOCKS);
    BlisCliTest.Outcome other = blis(with(replay, "--kv-offload-config", cpuOnly.toString()));
    assertThat(other.code()).isEqualTo(2);
    assertThat(other.err().strip()).startsWith("blis replay: --kv-offload-config " + cpuOnly + " differs from the"
        + " kv_offload configuration the trace header " + prefix + ".yaml records; on replay the header decides");
    BlisCliTest.Outcome flags = blis(with(replay, "--kv-cpu-blocks", "50"));
    assertThat(flags.code()).isEqualTo(2);
    assertThat(flags.err()).contains("records a kv_offload configuration, which sizes the CPU KV tier; leave out"
        + " --kv-offloading-size-gib and --kv-cpu-blocks");

    // a trace of a run without offload does not take one on replay
    Path bare = dir.resolve("bare");
    json(blis("run", "--model", "qwen/qwen3-14b", "--num-requests", "20", "--trace-output", bare.toString()));
    assertThat(Files.readString(dir.resolve("bare.yaml"))).doesNotContain("kv_offload");
    BlisCliTest.Outcome added = blis("replay", "--trace-header", bare + ".yaml", "--trace-data", bare + ".csv",
        "--model", "qwen/qwen3-14b", "--kv-offload-config", disk.toString());
    assertThat(added.code()).isEqualTo(2);
    assertThat(added.err()).contains("was recorded without a kv_offload configuration (mode generated); a replay of a"
        + " simulated trace keeps its configuration, only an observed one (mode real) takes one");
  }

  private static String[] with(String[] args, String... extra) {
    String[] out = java.util.Arrays.copyOf(args, args.length + extra.length);
    System.arraycopy(extra, 0, out, args.length, extra.length);
    return out;
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
