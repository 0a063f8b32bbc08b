package io.blis.engine.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.profile.EfficiencyFit;
import io.blis.latency.profile.KernelProfile;
import java.util.List;

/**
 * {@code blis gpu-profile --from FILE} on a CSV of kernel timings (the simple format, or Vidur's
 * {@code mlp.csv} and {@code all_reduce.csv} read by their headers): an accepted file's timings
 * are fitted to an efficiency entry against the A100's datasheet.
 */
class KernelProfileFuzzTest extends ParserFuzzing {

  @FuzzTest
  void fuzz(byte[] in) throws Exception {
    parseThenUse(getClass(), in, "timings.csv", f -> KernelProfile.read(List.of(f)),
        (profile, file) -> EfficiencyFit.fit(profile, GpuCatalog.byName("A100-80GB"), "fuzz"));
  }
}
