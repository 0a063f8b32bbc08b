package io.blis.engine.validate;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The staged search's request limits, and which trained-physics coefficients a training set leaves
 * unexercised and what they take.
 */
class TrainedPhysicsCalibrationTest {

  private static Experiment variant(Experiment base, String id, Path config, int tp) {
    return new Experiment(id, id, config, base.gpu(), tp, 1, base.maxModelLen(), 2048, 128, 0.9, 16, -1, 0,
        base.workloadName(), base.profile(), false, base.observed(), base.trace());
  }

  private static List<String> tied(List<Experiment> training) {
    return TrainedPhysicsCalibration.unexercised(training).stream().map(Calibrator.Tie::parameter).toList();
  }

  @Test
  void tiesOnlyWhatNoTrainingRunExercises(@TempDir Path dir) throws Exception {
    Experiment dense = ExperimentsFile.read(TraceFixtures.resource("experiments-small.json")).get(0);
    // a small MoE config: 4 experts, 2 per token
    String moeJson = Files.readString(dense.modelConfig())
        .replace("\"model_type\": \"llama\"", "\"model_type\": \"mixtral\", \"num_local_experts\": 4,"
            + " \"num_experts_per_tok\": 2");
    Path moeConfig = Files.writeString(dir.resolve("config.json"), moeJson);
    Experiment moeTp2 = variant(dense, "moe-tp2", moeConfig, 2);
    Experiment denseTp2 = variant(dense, "dense-tp2", dense.modelConfig(), 2);

    assertThat(tied(List.of(dense))).containsExactly("expert_weight_load", "moe_routing", "per_moe_layer_us",
        "tp_comm", "per_allreduce_us");
    assertThat(tied(List.of(dense, denseTp2))).containsExactly("expert_weight_load", "moe_routing",
        "per_moe_layer_us");
    assertThat(tied(List.of(dense, moeTp2))).isEmpty();

    List<Calibrator.Tie> ties = TrainedPhysicsCalibration.unexercised(List.of(dense));
    assertThat(ties.get(0)).isEqualTo(new Calibrator.Tie("expert_weight_load", "weight_load", 0));
    assertThat(ties.get(3)).isEqualTo(new Calibrator.Tie("tp_comm", null, 1));
    assertThat(ties.get(4)).isEqualTo(new Calibrator.Tie("per_allreduce_us", null, 0));
    // every tied name is a coefficient of the space, and so is every parameter followed
    ParameterSpace space = TrainedPhysicsCalibration.space(io.blis.latency.physics.TrainedPhysicsCoefficients.bundled());
    for (Calibrator.Tie t : ties) {
      assertThat(space.indexOf(t.parameter())).isNotNegative();
      if (t.follows() != null) {
        assertThat(space.indexOf(t.follows())).isNotNegative();
      }
    }
  }

  @Test
  void searchStagesUseTheSubsampleAndTheJointStageItsOwnLimit() {
    List<CalibrationStage> byDefault = TrainedPhysicsCalibration.stages(400,
        TrainedPhysicsCalibration.defaultJointSubsample(400), 1);
    assertThat(byDefault).extracting(CalibrationStage::name).containsExactly("decode", "ttft", "joint");
    assertThat(byDefault).extracting(CalibrationStage::maxRequestsPerStage).containsExactly(400, 400, 800);
    assertThat(TrainedPhysicsCalibration.stages(400, 0, 1)).extracting(CalibrationStage::maxRequestsPerStage)
        .containsExactly(400, 400, 0);
    assertThat(TrainedPhysicsCalibration.defaultJointSubsample(0)).isZero();
    // the budget scales every stage's evaluations
    assertThat(TrainedPhysicsCalibration.stages(400, 800, 0.5).get(0).searchEvaluations())
        .isEqualTo(byDefault.get(0).searchEvaluations() / 2);
  }
}
