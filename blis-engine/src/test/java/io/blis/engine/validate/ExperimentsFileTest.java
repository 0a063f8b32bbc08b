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
    assertThat(e.profile().data().systemPromptLen()).isEqualTo(100);
    assertThat(e.profile().data().questionLen()).isEqualTo(466);
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
}
