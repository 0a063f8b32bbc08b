package io.blis.engine.validate;

import io.blis.api.Coefficients;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/** Writes fitted coefficients to a file the latency models can load. */
@FunctionalInterface
public interface CoefficientWriter {

  /**
   * Writes {@code coefficients} to {@code file}.
   *
   * @param provenance comment lines saying how the values were produced (command, loss, date-free)
   */
  void write(Coefficients coefficients, Path file, List<String> provenance) throws IOException;

  /**
   * The versioned YAML format: {@code version: 1}, {@code latency_model: <name>}, then one
   * flow-sequence per coefficient vector ({@code alpha: [..]}, {@code beta: [..]}), values with
   * 9 significant digits, provenance as leading comments.
   */
  static CoefficientWriter yaml(String latencyModel) {
    return (coefficients, file, provenance) -> {
      StringBuilder sb = new StringBuilder();
      for (String line : provenance) {
        sb.append("# ").append(line.replace('\n', ' ')).append('\n');
      }
      sb.append("version: 1\n").append("latency_model: ").append(latencyModel).append('\n');
      for (String name : coefficients.names()) {
        sb.append(name).append(": [");
        double[] v = coefficients.vector(name);
        for (int i = 0; i < v.length; i++) {
          sb.append(i == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.9g", v[i]));
        }
        sb.append("]\n");
      }
      io.blis.engine.result.OutputFiles.write(file, sb); // atomically: never half a file
    };
  }
}
