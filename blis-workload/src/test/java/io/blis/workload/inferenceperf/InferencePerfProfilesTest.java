package io.blis.workload.inferenceperf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.blis.workload.TestSupport;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class InferencePerfProfilesTest {

  static final String CONFIG = """
      load:
        type: constant
        interval: 1
        stages:
        - rate: 5
          duration: 600
        - rate: 10
          duration: 600
      api:
        type: completion
        streaming: true
      server:
        type: vllm
        model_name: meta-llama/Llama-2-7b-hf
        ignore_eos: true
      data:
        type: shared_prefix
        shared_prefix:
          num_groups: 10
          num_prompts_per_group: 10
          system_prompt_len: 100
          question_len: 466
          output_len: 247
      """;

  @Test
  void parsesAnInferencePerfConfig() {
    InferencePerfProfile p = InferencePerfProfiles.parse(CONFIG, "codegen.yaml");
    assertThat(p.data()).isEqualTo(new SharedPrefixData(10, 10, 100, 466, 247));
    assertThat(p.stages()).containsExactly(new LoadStage(5, 600), new LoadStage(10, 600));
    assertThat(p.stageIntervalS()).isEqualTo(1.0);
    assertThat(p.clientTimeoutS()).isEqualTo(300.0);
    assertThat(p.loadType()).isEqualTo(InferencePerfProfile.LoadType.CONSTANT);
    assertThat(p.totalRequests()).isEqualTo(9000);
  }

  @Test
  void unknownKeysAndBadValuesNameTheLine() {
    String typo = CONFIG.replace("question_len: 466", "question_length: 466");
    assertThatThrownBy(() -> InferencePerfProfiles.parse(typo, "p.yaml"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("p.yaml:22:")
        .hasMessageContaining("question_length");
    String negative = CONFIG.replace("rate: 10", "rate: -10");
    assertThatThrownBy(() -> InferencePerfProfiles.parse(negative, "p.yaml"))
        .hasMessageStartingWith("p.yaml:7:")
        .hasMessageContaining("rate");
    String wrongType = CONFIG.replace("output_len: 247", "output_len: lots");
    assertThatThrownBy(() -> InferencePerfProfiles.parse(wrongType, "p.yaml"))
        .hasMessageStartingWith("p.yaml:23:")
        .hasMessageContaining("output_len");
    String fractional = CONFIG.replace("output_len: 247", "output_len: 24.5");
    assertThatThrownBy(() -> InferencePerfProfiles.parse(fractional, "p.yaml"))
        .hasMessageContaining("output_len");
    String otherData = CONFIG.replace("type: shared_prefix", "type: random");
    assertThatThrownBy(() -> InferencePerfProfiles.parse(otherData, "p.yaml"))
        .hasMessageContaining("p.yaml:17:3:")
        .hasMessageContaining("data.type random needs input_distribution and output_distribution");
    String dataset = CONFIG.replace("type: shared_prefix", "type: shareGPT");
    assertThatThrownBy(() -> InferencePerfProfiles.parse(dataset, "p.yaml"))
        .hasMessageContaining("data.type shareGPT reads its prompts from a dataset");
    String multiTurn = CONFIG.replace("output_len: 247", "output_len: 247\n    enable_multi_turn_chat: true");
    assertThat(InferencePerfProfiles.parse(multiTurn, "p.yaml").multiTurnChat()).isTrue();
    assertThat(InferencePerfProfiles.parse(CONFIG, "p.yaml").multiTurnChat()).isFalse();
  }

  @Test
  void readsEveryGroundTruthExperiment() throws Exception {
    Path gt = TestSupport.groundTruth();
    assumeTrue(gt != null, "ground truth not present");
    Path experiments = gt.resolve("experiments.json");
    InferencePerfProfile codegen =
        InferencePerfProfiles.fromExperiments(experiments, "20260217-155451-llama-2-7b-tp1-codegen");
    assertThat(codegen.data()).isEqualTo(new SharedPrefixData(10, 10, 100, 466, 247));
    assertThat(codegen.stages()).containsExactly(new LoadStage(5, 600), new LoadStage(10, 600));
    assertThat(codegen.clientTimeoutS()).isEqualTo(300);
    var root = new com.fasterxml.jackson.databind.ObjectMapper().readTree(experiments.toFile());
    int n = 0;
    for (var e : root.path("experiments")) {
      InferencePerfProfile p = InferencePerfProfiles.fromExperiments(experiments, e.path("id").asText());
      assertThat(p.totalRequests()).isEqualTo(e.path("workload").path("total_requests").asLong());
      n++;
    }
    assertThat(n).isEqualTo(12);
    assertThatThrownBy(() -> InferencePerfProfiles.fromExperiments(experiments, "nope"))
        .hasMessageContaining("known ids");
  }

  @Test
  void poissonLoadSpreadsAPoissonCountPerSecond() {
    InferencePerfProfile p = new InferencePerfProfile(
        new SharedPrefixData(2, 3, 10, 10, 5), List.of(new LoadStage(20, 300)), 1, 0,
        InferencePerfProfile.LoadType.POISSON);
    var rs = TestSupport.drain(InferencePerfWorkload.synthetic(p, 5));
    assertThat(rs.size()).isBetween(6000 - 300, 6000 + 300);
    int[] perSecond = new int[300];
    for (var r : rs) {
      double s = r.arrivalTimeUs() / 1e6 - 1.0;
      assertThat(s).isBetween(0.0, 300.0);
      perSecond[Math.min(299, (int) s)]++;
    }
    double mean = 0;
    double var = 0;
    for (int c : perSecond) {
      mean += c / 300.0;
    }
    for (int c : perSecond) {
      var += (c - mean) * (c - mean) / 299.0;
    }
    // Poisson counts: variance close to the mean.
    assertThat(var / mean).isBetween(0.75, 1.3);
  }
}
