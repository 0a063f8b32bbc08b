package io.blis.engine.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.blis.workload.inferenceperf.InferencePerfProfile;
import io.blis.workload.inferenceperf.InferencePerfProfiles;
import io.blis.workload.inferenceperf.InferencePerfWorkload;
import io.blis.workload.trace.TraceReader;
import java.nio.file.Path;

/**
 * {@code blis replay --trace FILE} on a plain file: a BLIS trace, else a ground-truth CSV; the first
 * requests of an accepted trace are replayed.
 */
class TraceCsvFuzzTest extends ParserFuzzing {

  /** The profile a ground-truth trace is replayed with (it holds no prompt structure itself). */
  private static final InferencePerfProfile REPLAY_PROFILE = InferencePerfProfiles.parse("""
      load: {type: constant, stages: [{rate: 4, duration: 5}]}
      data:
        type: shared_prefix
        shared_prefix: {num_groups: 2, num_prompts_per_group: 3, system_prompt_len: 10,
          question_len: 20, output_len: 5}
      """, "replay profile");

  @FuzzTest
  void fuzz(byte[] in) throws Exception {
    Path file = input(getClass(), in, "trace.csv");
    if (file != null) {
      replay(file, text(in));
    }
  }

  /** Reads {@code file} as blis replay does; {@code text} is what it holds, decompressed. */
  static void replay(Path file, String text) throws Exception {
    boolean[] blis = new boolean[1];
    if (!OneLineErrors.accepted(text, file.toString(), () -> blis[0] = TraceReader.isBlisTrace(file))) {
      return;
    }
    if (blis[0]) {
      OneLineErrors.accepted(text, file.toString(), () -> TraceReader.header(file));
      OneLineErrors.accepted(text, file.toString(), () -> pull(TraceReader.open(file)));
    } else {
      OneLineErrors.accepted(text, file.toString(),
          () -> pull(InferencePerfWorkload.replay(REPLAY_PROFILE, file, 1)));
    }
  }
}
