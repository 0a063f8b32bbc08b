package io.blis.engine.validate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ExperimentsFileTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void readsTheSmallExperimentsFile() {
    List<Experiment> exps = ExperimentsFile.read(TraceFixtures.resource("experiments-small.json"));
    assertThat(exps).hasSize(1);
    Experiment e = exps.get(0);
    assertThat(e.id()).isEqualTo("test-llama-2-7b-tp1-codegen-first300");
    assertThat(e.model()).isEqualTo("meta-llama/Llama-2-7b-hf");
    assertThat(e.modelConfig()).exists().hasFileName("config.json");
    assertThat(e.tp()).isEqualTo(1);
    assertThat(e.limits().maxNumSeqs()).isEqualTo(128);
    assertThat(e.limits().maxNumBatchedTokens()).isEqualTo(2048);
    assertThat(e.limits().maxModelLen()).isEqualTo(4096);
    assertThat(e.kvBlocksGpu()).isEqualTo(7462);
    assertThat(e.blockSizeTokens()).isEqualTo(16);
    assertThat(e.cpuOffloadBytes()).isEqualTo(8L << 30);
    assertThat(e.workloadName()).isEqualTo("codegen");
    assertThat(((io.blis.workload.inferenceperf.SharedPrefixData) e.profile().data()).systemPromptLen())
        .isEqualTo(100);
    assertThat(((io.blis.workload.inferenceperf.SharedPrefixData) e.profile().data()).questionLen())
        .isEqualTo(466);
    assertThat(e.outputLen()).isEqualTo(247);
    assertThat(e.profile().stages()).hasSize(1);
    assertThat(e.profile().totalRequests()).isEqualTo(300);
    assertThat(e.profile().clientTimeoutS()).isEqualTo(300.0);
    assertThat(e.saturated()).isFalse();
    assertThat(e.observed().overall().e2eMeanMs()).isCloseTo(1897.97, within(1e-9));
    assertThat(e.observed().stages()).hasSize(1);
    assertThat(e.trace()).get().satisfies(p -> assertThat(p).exists());
  }

  @Test
  void readsEveryGroundTruthExperiment() {
    Path exp = Path.of("/work/shared/groundtruth/experiments.json");
    assumeTrue(Files.exists(exp), "ground truth not available");
    List<Experiment> exps = ExperimentsFile.read(exp);
    assertThat(exps).hasSize(12);
    assertThat(exps.stream().filter(Experiment::saturated)).hasSize(3);
    for (Experiment e : exps) {
      assertThat(e.modelConfig()).exists();
      assertThat(e.trace()).get().satisfies(p -> assertThat(p).exists());
      assertThat(e.observed().stages()).hasSameSizeAs(e.profile().stages());
      long sent = e.observed().overall().countSuccess() + e.observed().overall().countFailed();
      assertThat(sent).isEqualTo(e.profile().totalRequests());
    }
  }

  static Stream<Arguments> brokenFields() {
    return Stream.of(
        Arguments.of("remove", "model", "field 'model': missing"),
        Arguments.of("remove", "vllm.max_num_seqs", "field 'vllm.max_num_seqs': missing"),
        Arguments.of("set:-4", "vllm.max_num_batched_tokens", "field 'vllm.max_num_batched_tokens': expected a positive integer"),
        Arguments.of("set:\"x\"", "tp", "field 'tp': expected an integer"),
        Arguments.of("set:3", "ep", "field 'ep': expert parallelism spreads the experts over the tp x dp = 1 GPUs"),
        Arguments.of("set:0", "pp", "field 'pp': expected a positive integer"),
        Arguments.of("set:1.5", "vllm.gpu_memory_utilization", "expected a fraction in (0, 1]"),
        Arguments.of("set:0", "workload.data.output_len", "output_len"),
        Arguments.of("set:\"random\"", "workload.data.type", "type"),
        Arguments.of("set:[]", "workload.load.stages", "stage"),
        Arguments.of("remove", "observed.overall.e2e_ms", "field 'e2e_ms.mean': missing"),
        Arguments.of("set:-1", "observed.overall.ttft_ms.mean", "field 'ttft_ms.mean': expected a number >= 0"));
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("brokenFields")
  void brokenFieldsNameFileExperimentAndField(String action, String path, String expected, @TempDir Path dir)
      throws Exception {
    ObjectNode root = (ObjectNode) JSON.readTree(TraceFixtures.resource("experiments-small.json").toFile());
    ObjectNode exp = (ObjectNode) root.get("experiments").get(0);
    String[] parts = path.split("\\.");
    ObjectNode parent = exp;
    for (int i = 0; i < parts.length - 1; i++) {
      parent = (ObjectNode) parent.get(parts[i]);
    }
    String leaf = parts[parts.length - 1];
    if (action.equals("remove")) {
      parent.remove(leaf);
    } else {
      parent.set(leaf, JSON.readTree(action.substring(4)));
    }
    Path file = dir.resolve("broken.json");
    JSON.writeValue(file.toFile(), root);
    assertThatThrownBy(() -> ExperimentsFile.read(file))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(file.toString())
        .hasMessageContaining("test-llama-2-7b-tp1-codegen-first300")
        .hasMessageContaining(expected);
  }

  @Test
  void pipelineDataAndExpertParallelismAreReadIntoTheLayout(@TempDir Path dir) throws Exception {
    ObjectNode root = (ObjectNode) JSON.readTree(TraceFixtures.resource("experiments-small.json").toFile());
    ObjectNode exp = (ObjectNode) root.get("experiments").get(0);
    exp.put("tp", 2).put("pp", 2).put("dp", 2).put("ep", 4);
    Path file = dir.resolve("layout.json");
    JSON.writeValue(file.toFile(), root);
    assertThat(only(file).layout()).isEqualTo(new io.blis.latency.layout.Layout(2, 2, 2, 4));
    assertThat(only(TraceFixtures.resource("experiments-small.json")).layout())
        .isEqualTo(io.blis.latency.layout.Layout.tensorParallel(1));
  }

  private static Path withHardware(Path dir, String gpu, String spec) throws Exception {
    ObjectNode root = (ObjectNode) JSON.readTree(TraceFixtures.resource("experiments-small.json").toFile());
    ObjectNode hw = (ObjectNode) root.get("experiments").get(0).get("hardware");
    hw.put("gpu", gpu);
    if (spec == null) {
      hw.remove("spec");
    } else {
      hw.put("spec", spec);
    }
    Path file = dir.resolve("hw-" + Math.abs((gpu + spec).hashCode()) + ".json");
    JSON.writeValue(file.toFile(), root);
    return file;
  }

  private static Experiment only(Path file) {
    return ExperimentsFile.read(file).get(0);
  }

  @Test
  void gpuComesFromTheNameTheSpecKeyOrTheDeviceDescription(@TempDir Path dir) throws Exception {
    // Recorded name unknown to the catalog, spec key an alias: the ground truth's case.
    assertThat(EngineRunSimulator.gpu(ExperimentsFile.read(TraceFixtures.resource("experiments-small.json")).get(0))
        .name()).isEqualTo("H100");
    assertThat(EngineRunSimulator.gpu(only(withHardware(dir, "A100-80GB", null))).name()).isEqualTo("A100-80GB");
    // Device descriptions as nvidia-smi prints them; a variant the catalog has is not taken for another.
    assertThat(only(withHardware(dir, "NVIDIA A100-SXM4-40GB", null)).gpu()).isEqualTo("A100-40GB");
    assertThat(only(withHardware(dir, "NVIDIA H100 NVL", null)).gpu()).isEqualTo("H100-NVL");
    assertThat(only(withHardware(dir, "NVIDIA H100 80GB HBM3", null)).gpu()).isEqualTo("H100");
  }

  @Test
  void anUnbundledGpuIsReadFromItsSpecEntry(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("gpus.json"), """
        {"_note": "two GPUs",
         "B300_288GB": {"bf16_dense_tflops": 2250, "fp8_dense_tflops": 4500, "hbm_bandwidth_tb_s": 8.0,
                        "memory_gb": 288, "nvlink_bandwidth_gb_s": 1800}}
        """);
    Experiment e = only(withHardware(dir, "NVIDIA B300", "gpus.json#B300_288GB"));
    var gpu = EngineRunSimulator.gpu(e);
    assertThat(gpu.memoryBandwidthBytesPerS()).isEqualTo(8.0e12);
    assertThat(gpu.peakFlopsBf16()).isEqualTo(2250e12);
    assertThat(gpu.memoryBytes()).isEqualTo((long) (288 * 0.99 * Math.pow(2, 30)));

    Path noSpec = withHardware(dir, "NVIDIA B300", null);
    assertThatThrownBy(() -> ExperimentsFile.read(noSpec))
        .hasMessageContaining(noSpec.toString())
        .hasMessageContaining("field 'hardware.gpu': unknown GPU 'NVIDIA B300'")
        .hasMessageContaining("hardware.spec");
    Path wrongKey = withHardware(dir, "NVIDIA B300", "gpus.json#B300");
    assertThatThrownBy(() -> ExperimentsFile.read(wrongKey))
        .hasMessageContaining("field 'hardware.spec'")
        .hasMessageContaining("no GPU entry 'B300' (entries: B300_288GB)");
    // An unknown variant of a bundled family is an error, not the family's default.
    Path variant = withHardware(dir, "NVIDIA H100 64GB", null);
    assertThatThrownBy(() -> ExperimentsFile.read(variant)).hasMessageContaining("unknown GPU 'NVIDIA H100 64GB'");
  }

  @Test
  void rejectsFilesWithoutExperimentsAndDuplicateIds(@TempDir Path dir) throws Exception {
    Path empty = dir.resolve("empty.json");
    Files.writeString(empty, "{\"runs\": []}");
    assertThatThrownBy(() -> ExperimentsFile.read(empty))
        .hasMessageContaining(empty.toString()).hasMessageContaining("'experiments' array");
    ObjectNode root = (ObjectNode) JSON.readTree(TraceFixtures.resource("experiments-small.json").toFile());
    root.withArray("experiments").add(root.get("experiments").get(0).deepCopy());
    Path dup = dir.resolve("dup.json");
    JSON.writeValue(dup.toFile(), root);
    assertThatThrownBy(() -> ExperimentsFile.read(dup)).hasMessageContaining("duplicate experiment id");
    Path missing = dir.resolve("nope.json");
    assertThatThrownBy(() -> ExperimentsFile.read(missing)).hasMessageContaining(missing.toString());
  }

  @Test
  void aLineBreakInAnIdOrAModelIsEscapedSoTheMessageStaysOneLine(@TempDir Path dir) throws Exception {
    ObjectNode root = (ObjectNode) JSON.readTree(TraceFixtures.resource("experiments-small.json").toFile());
    ObjectNode exp = (ObjectNode) root.get("experiments").get(0);
    exp.put("id", "run\n1");
    exp.put("model", "llama\f7b");
    exp.remove("model_config");
    Path file = dir.resolve("breaks.json");
    JSON.writeValue(file.toFile(), root);
    assertThatThrownBy(() -> ExperimentsFile.read(file))
        .hasMessageStartingWith(file + ": experiment 'run\\u000A1': field 'model_config': missing, and the"
            + " model is not bundled: unknown model 'llama\\u000C7b'")
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n").doesNotContain("\f"));
  }
}
