package io.blis.engine.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.blis.engine.EngineLimits;
import io.blis.engine.Simulation;
import io.blis.engine.spec.AcceptanceProfile;
import io.blis.engine.spec.SpeculativeConfig;
import io.blis.engine.spec.SpeculativeMethod;
import io.blis.engine.spec.SpeculativeModel;
import io.blis.engine.spec.Speculator;
import io.blis.latency.LatencyModels;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.List;

/**
 * {@code --speculative-config JSON}, vLLM's: an accepted config (a mean acceptance rate given beside
 * it) decodes two requests speculatively on one instance; a refused one is refused in one line.
 */
class SpeculativeConfigFuzzTest extends ParserFuzzing {

  @FuzzTest
  void fuzz(byte[] in) throws Exception {
    if (!counted(getClass(), in)) {
      return;
    }
    String text = text(in);
    OneLineErrors.accepted(text, null, () -> {
      SpeculativeConfig.Parsed p = SpeculativeConfig.parseVllm(text, "--speculative-config");
      // a draft model is not resolved here (its config would be read from the catalog): its head instead
      SpeculativeMethod m = p.method() == SpeculativeMethod.DRAFT_MODEL ? SpeculativeMethod.EAGLE : p.method();
      SpeculativeConfig c = new SpeculativeConfig(m, p.tokens(), AcceptanceProfile.ofMeanRate(0.5, Math.max(1,
          p.tokens())), "fuzz", p.model(), p.draftLayers(), 100);
      int[] prompt = {1, 2, 3, 4, 5, 6, 7, 8};
      Simulation.builder().latencyModel(new SpeculativeModel(LatencyModels.constantStep(1000), null,
              new Speculator(c, 1, 0))).limits(new EngineLimits(8, 64, 0, 0)).totalKvBlocks(64)
          .source(RequestSource.of(List.of(RequestSpec.simple(1, 0, prompt, 20), RequestSpec.simple(2, 0, prompt, 7))))
          .build().run();
    });
  }
}
