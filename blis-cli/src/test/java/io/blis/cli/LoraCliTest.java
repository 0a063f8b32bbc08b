package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code blis run} and {@code replay} with LoRA adapters: vLLM's flags, Go BLIS's and a config file. */
class LoraCliTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private static final List<String> BASE = List.of("run", "--model", "llama-3.1-8b", "--num-instances", "2",
      "--rate", "8", "--num-requests", "300", "--prompt-tokens", "512", "--output-tokens", "64", "--lora-adapters", "12");

  private static BlisCliTest.Outcome run(String... extra) {
    List<String> args = new ArrayList<>(BASE);
    args.addAll(List.of(extra));
    return blis(args.toArray(String[]::new));
  }

  @Test
  void vllmFlagsGoFlagsAndTheConfigFileMeanTheSame(@TempDir Path dir) throws Exception {
    BlisCliTest.Outcome vllm = run("--max-loras", "2", "--max-cpu-loras", "12");
    assertThat(vllm.code()).as(vllm.err()).isZero();
    JsonNode lora = JSON.readTree(vllm.out()).path("lora");
    assertThat(lora.path("max_loras").asInt()).isEqualTo(2);
    assertThat(lora.path("max_cpu_loras").asInt()).isEqualTo(12);
    assertThat(lora.path("peak_resident_per_instance").asInt()).isLessThanOrEqualTo(2);
    assertThat(lora.path("adapters_seen").asInt()).isEqualTo(12);
    // every adapter stays in host memory: each instance reads each checkpoint once
    assertThat(lora.path("checkpoint_reads").asLong()).isEqualTo(24);
    assertThat(lora.path("gpu_loads").asLong()).isGreaterThan(24);
    assertThat(JSON.readTree(vllm.out()).path("overall").path("completed_requests").asLong()).isEqualTo(300);
    // 2 slots of Llama-3.1-8B at rank 16: 2 x 83,886,080 bytes
    assertThat(lora.path("reserved_gib_per_gpu").asDouble()).isEqualTo(0.1562);

    Path file = dir.resolve("lora.yaml");
    Files.writeString(file, """
        lora:
          adapter_capacity: 2
          max_cpu_loras: 12
          load_base_latency_us: 1500
          load_bandwidth_bytes_us: 2000
        """);
    BlisCliTest.Outcome fromFile = run("--lora-config", file.toString());
    assertThat(fromFile.code()).as(fromFile.err()).isZero();
    assertThat(fromFile.out()).isEqualTo(vllm.out());
    BlisCliTest.Outcome go = run("--lora-adapter-capacity", "2", "--max-cpu-loras", "12",
        "--lora-load-base-latency-us", "1500", "--lora-load-bandwidth-bytes-us", "2000");
    assertThat(go.out()).isEqualTo(vllm.out());
    // a slower disk: the same loads, each longer
    BlisCliTest.Outcome slow = run("--lora-config", file.toString(), "--lora-load-bandwidth-bytes-us", "500");
    assertThat(JSON.readTree(slow.out()).path("lora").path("load_time_ms").asDouble())
        .isGreaterThan(lora.path("load_time_ms").asDouble());
  }

  @Test
  void theAffinityScorerKeepsAdaptersWhereTheyAre() throws Exception {
    BlisCliTest.Outcome rr = run("--max-loras", "2", "--routing-policy", "round-robin");
    BlisCliTest.Outcome affinity = run("--max-loras", "2", "--routing-policy", "weighted", "--lora-scorer-weight", "2");
    assertThat(affinity.code()).as(affinity.err()).isZero();
    assertThat(JSON.readTree(affinity.out()).path("lora").path("gpu_loads").asLong())
        .isLessThan(JSON.readTree(rr.out()).path("lora").path("gpu_loads").asLong());
  }

  @Test
  void aTraceKeepsTheAdaptersAndReplaysTheSame(@TempDir Path dir) throws Exception {
    Path trace = dir.resolve("t.csv");
    BlisCliTest.Outcome r = run("--max-loras", "3", "--trace-out", trace.toString());
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(Files.readAllLines(trace).stream().filter(l -> !l.startsWith("#")).findFirst().orElseThrow())
        .contains("adapter");
    BlisCliTest.Outcome replay = blis("replay", "--trace", trace.toString(), "--model", "llama-3.1-8b",
        "--num-instances", "2", "--max-loras", "3");
    assertThat(replay.code()).as(replay.err()).isZero();
    assertThat(JSON.readTree(replay.out()).path("lora")).isEqualTo(JSON.readTree(r.out()).path("lora"));
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "--max-loras 0|--max-loras must be in [1, 1000000], got 0",
      "--max-loras 4 --max-cpu-loras 2|--max-cpu-loras (2) must be at least --max-loras (4), as vLLM requires",
      "--max-loras 2 --lora-scorer-weight 1 --routing-policy round-robin|--lora-scorer-weight adds the lora-affinity"
          + " scorer to the weighted router; the router is round-robin",
      "--max-loras 2 --lora-scorer-weight -1|--lora-scorer-weight must be a finite number > 0, got -1.0",
      "--lora-config nowhere.yaml|--lora-config: no such file 'nowhere.yaml'",
      "--max-loras 2 --max-lora-rank 8 --lora-load-bandwidth-bytes-us 0|--lora-load-bandwidth-bytes-us must be > 0",
      "--max-loras 2 --routing-policy weighted --routing-scorers load:1,lora-affinity:1 --lora-scorer-weight 1|"
          + "lora-affinity is already among the scorers",
  })
  void badFlagsAreOneLineEach(String flags, String message) {
    BlisCliTest.Outcome r = run(flags.split(" "));
    assertThat(r.code()).isNotZero();
    assertThat(r.err()).contains(message);
    assertThat(r.err().strip().lines().count()).as(r.err()).isLessThanOrEqualTo(2);
    assertThat(r.err()).doesNotContain("Exception");
  }

  @Test
  void aBadConfigFileNamesItsLine(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("lora.yaml");
    Files.writeString(file, "lora:\n  max_loras: 2\n  adapters:\n    - {id: sql, rank: 64}\n");
    BlisCliTest.Outcome r = run("--lora-config", file.toString());
    assertThat(r.code()).isNotZero();
    assertThat(r.err()).contains(file.toString()).contains("rank 64 exceeds max_lora_rank 16");
    // adapters a registry does not list are refused as vLLM answers an unknown model: counted, with a warning
    // saying how many, and when every request names one the run is refused (nothing served measures nothing)
    Files.writeString(file, "lora:\n  max_loras: 2\n  adapters:\n    - {id: sql, rank: 8}\n");
    BlisCliTest.Outcome unknown = run("--lora-config", file.toString(), "--lora-base-share", "0.5");
    assertThat(unknown.code()).as(unknown.err()).isZero();
    long notServed = JSON.readTree(unknown.out()).at("/overall/rejected_by_reason/adapter_not_served").asLong();
    assertThat(notServed).isBetween(100L, 200L);
    assertThat(unknown.err()).startsWith("warning: " + notServed + " of 300 requests were refused: " + notServed
        + " adapter_not_served (a LoRA adapter the registry does not list)");
    BadInputCliTest.refused(run("--lora-config", file.toString()), "every request was refused, nothing was served: 300"
        + " adapter_not_served (a LoRA adapter the registry does not list)");
    // and so are they all when LoRA is off, the line saying why
    BadInputCliTest.refused(run(), "300 adapter_not_served (a LoRA adapter, and LoRA is off); give --enable-lora,"
        + " --max-loras or --lora-config to serve the adapters");
  }
}
