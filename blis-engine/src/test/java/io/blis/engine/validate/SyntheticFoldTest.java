package io.blis.engine.validate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.blis.api.Coefficients;
import io.blis.latency.physics.TrainedPhysicsCoefficients;
import io.blis.workload.inferenceperf.InferencePerfProfile;
import io.blis.workload.inferenceperf.LoadStage;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Leave-one-model-out through the real engine, on models whose "measurements" are simulations with
 * known coefficients: the fold that holds out a synthetic model must recover the coefficients from
 * the other models and predict the held-out one, and the ensemble built from the folds must then
 * agree with itself (no spread, no residual).
 */
class SyntheticFoldTest {

  private static final List<String> FREE = List.of("decode_memory", "weight_load");
  private static final double[] KNOWN = {1.4, 1.6};

  @Test
  void aFoldHoldingOutASyntheticModelRecoversTheKnownCoefficients(@TempDir Path dir) throws Exception {
    EngineRunSimulator sim = new EngineRunSimulator(EngineRunSimulator.Mode.SYNTHETIC, "trained-physics", 7);
    List<String> names = TrainedPhysicsCoefficients.names();
    double[] truth = TrainedPhysicsCoefficients.defaults();
    for (int i = 0; i < FREE.size(); i++) {
      truth[names.indexOf(FREE.get(i))] = KNOWN[i];
    }
    Coefficients truthCoefficients = TrainedPhysicsCoefficients.toCoefficients(truth, "truth");

    Experiment base = ExperimentsFile.read(TraceFixtures.resource("experiments-small.json")).get(0);
    // a synthetic GQA model no data set has: 24 layers, 8 KV heads of 24
    Path gqa = dir.resolve("synthetic--gqa-5b/config.json");
    Files.createDirectories(gqa.getParent());
    Files.writeString(gqa, """
        {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 24,
         "hidden_size": 3072, "num_attention_heads": 24, "num_key_value_heads": 8,
         "intermediate_size": 8192, "vocab_size": 32000, "max_position_embeddings": 4096,
         "torch_dtype": "bfloat16"}
        """);
    List<Experiment> exps = new ArrayList<>();
    for (double rate : new double[] {2, 12}) {
      exps.add(observed(sim, truthCoefficients, base, "llama-" + rate, base.model(), base.modelConfig(), rate));
      exps.add(observed(sim, truthCoefficients, base, "gqa-" + rate, "synthetic/gqa-5b", gqa, rate));
    }

    double[] start = truth.clone();
    double[] off = {1.1, 1.25};
    for (int i = 0; i < FREE.size(); i++) {
      start[names.indexOf(FREE.get(i))] = off[i];
    }
    ParameterSpace space = TrainedPhysicsCalibration.space(TrainedPhysicsCoefficients.toCoefficients(start, "start"));
    List<CalibrationStage> stages = List.of(new CalibrationStage("steps", FREE, 0.5, 0, 1, 0, 120, 60));
    PrintStream quiet = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    try (Calibrator cal = new Calibrator(sim, space, new Calibrator.Settings(11, 2, 0, 0.05), quiet)) {
      List<Calibrator.Fold> folds = cal.crossValidate(exps, Experiment::model, stages);
      assertThat(folds).extracting(Calibrator.Fold::heldOut).containsExactly(base.model(), "synthetic/gqa-5b");
      Calibrator.Fold synthetic = folds.get(1);
      for (int i = 0; i < FREE.size(); i++) {
        assertThat(synthetic.values()[names.indexOf(FREE.get(i))]).as(FREE.get(i))
            .isCloseTo(KNOWN[i], within(0.04 * KNOWN[i]));
      }
      for (ExperimentComparison c : synthetic.comparisons()) {
        assertThat(c.id()).startsWith("gqa-");
        assertThat(c.ape(Metric.E2E_MEAN)).as(c.id()).isLessThan(1.5);
      }

      List<Ensemble.Member> members = folds.stream()
          .map(f -> new Ensemble.Member(f.heldOut(), space.coefficients(f.values()))).toList();
      EnsembleRuns runs = EnsembleRuns.simulate(cal.runs(), exps, members);
      List<EnsembleRuns.HeldOutRun> held = runs.heldOut(Metric.E2E_MEAN);
      assertThat(held).hasSize(4);
      for (EnsembleRuns.HeldOutRun r : held) {
        assertThat(r.memberLogSd()).as(r.id()).isLessThan(0.02);
        assertThat(Math.abs(r.logError())).as(r.id()).isLessThan(0.015);
      }
      assertThat(EnsembleRuns.residualLogSd(held)).isLessThan(0.015);
    }
  }

  private static Experiment observed(EngineRunSimulator sim, Coefficients truth, Experiment b, String id, String model,
      Path config, double rate) {
    InferencePerfProfile p = new InferencePerfProfile(b.profile().data(), List.of(new LoadStage(rate, 15)), 1, 300);
    Experiment e = new Experiment(id, model, config, b.gpu(), b.tp(), b.dp(), b.maxModelLen(), b.maxNumBatchedTokens(),
        b.maxNumSeqs(), b.gpuMemoryUtilization(), b.blockSizeTokens(), -1, b.cpuOffloadBytes(), b.workloadName(), p,
        false, b.observed(), b.trace());
    return new Experiment(id, model, config, b.gpu(), b.tp(), b.dp(), b.maxModelLen(), b.maxNumBatchedTokens(),
        b.maxNumSeqs(), b.gpuMemoryUtilization(), b.blockSizeTokens(), -1, b.cpuOffloadBytes(), b.workloadName(), p,
        false, sim.simulate(e, truth, 0), b.trace());
  }
}
