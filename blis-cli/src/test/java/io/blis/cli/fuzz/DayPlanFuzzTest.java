package io.blis.cli.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.blis.cli.plan.DayPlan;
import io.blis.engine.fuzz.OneLineErrors;
import io.blis.engine.fuzz.ParserFuzzing;

/**
 * A {@code blis day --plan} file: read, and every point's {@code blis run} arguments formed (the
 * flags' meaning is {@code blis run}'s parser's, fuzzed through its own files). A flag of this
 * target takes a value unless its name says {@code switch}.
 */
class DayPlanFuzzTest extends ParserFuzzing {

  @FuzzTest
  void fuzz(byte[] in) throws Exception {
    if (!counted(getClass(), in)) {
      return;
    }
    String text = text(in);
    OneLineErrors.accepted(text, "plan.yaml", () -> {
      DayPlan p = DayPlan.parse(text, "plan.yaml", f -> !f.contains("switch"));
      for (DayPlan.Point point : p.points()) {
        p.args(point, f -> !f.contains("switch"));
      }
    });
  }
}
