package io.blis.engine.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.blis.workload.spec.ServeGenData;
import io.blis.workload.spec.WorkloadFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * ServeGen's data ({@code blis convert servegen --path DIR}, a spec's {@code servegen_data}): one
 * chunk, its {@code chunk-1-trace.csv} the input up to a line {@value #SPLIT} and its {@code
 * chunk-1-dataset.json} the rest ({@code {}} when the input has no such line). An accepted folder's
 * spec is read as {@code --workload-spec} reads it and its first requests are generated.
 */
class ServeGenDataFuzzTest extends ParserFuzzing {

  /** The line between the trace and the dataset. */
  static final String SPLIT = "%%";

  @FuzzTest
  void fuzz(byte[] in) throws Exception {
    if (!counted(getClass(), in)) {
      return;
    }
    String text = text(in);
    byte[] split = ("\n" + SPLIT + "\n").getBytes(StandardCharsets.US_ASCII);
    int at = indexOf(in, split);
    Path dir = Files.createDirectories(scratch("servegen"));
    Files.write(dir.resolve("chunk-1-trace.csv"), at < 0 ? in : Arrays.copyOfRange(in, 0, at + 1));
    Files.write(dir.resolve("chunk-1-dataset.json"), at < 0 ? "{}".getBytes(StandardCharsets.US_ASCII)
        : Arrays.copyOfRange(in, at + split.length, in.length));
    StringBuilder yaml = new StringBuilder();
    if (OneLineErrors.accepted(text, dir.toString(), () -> yaml.append(ServeGenData.toYaml(dir,
        ServeGenData.DEFAULT_WINDOW_S, ServeGenData.DEFAULT_DRAIN_S, ServeGenData.CONVERT_SEED, null, List.of(),
        (long) REQUESTS_PULLED, null)))) {
      OneLineErrors.accepted(text, null, () -> pull(WorkloadFile.parse(yaml.toString(), "servegen.yaml")
          .source(ServeGenData.CONVERT_SEED)));
    }
  }

  /** Where {@code part} first starts in {@code in}, or -1. */
  private static int indexOf(byte[] in, byte[] part) {
    for (int i = 0; i + part.length <= in.length; i++) {
      if (Arrays.equals(in, i, i + part.length, part, 0, part.length)) {
        return i;
      }
    }
    return -1;
  }
}
