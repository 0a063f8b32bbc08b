package io.blis.cli;

import io.blis.engine.validate.Ensemble;
import io.blis.engine.validate.PredictionInterval;
import java.nio.file.Path;
import java.util.Locale;
import picocli.CommandLine.Option;

/** The prediction-interval flags shared by {@code run}, {@code replay} and {@code validate}. */
final class IntervalOptions {

  @Option(names = "--intervals",
      description = "Add a prediction interval to mean E2E and mean TTFT, from the bundled ensemble of "
          + "leave-one-model-out refits (trained-physics only; simulates once more per member).")
  boolean intervals;

  @Option(names = "--ensemble", paramLabel = "FILE",
      description = "Ensemble file for the intervals, as written by calibrate --cross-validate model --cv-out "
          + "(implies --intervals).")
  Path ensemble;

  @Option(names = "--interval-level", defaultValue = "0.9", paramLabel = "P",
      description = "Nominal coverage of the intervals, in (0, 1) (default: ${DEFAULT-VALUE}).")
  double level = PredictionInterval.DEFAULT_LEVEL;

  /** The ensemble to use, or null when no interval was asked for. */
  Ensemble resolve(String latencyModel) {
    if (!intervals && ensemble == null) {
      return null;
    }
    if (!(level > 0 && level < 1)) {
      throw new IllegalArgumentException("--interval-level must be in (0, 1), got " + level);
    }
    Ensemble e = ensemble == null ? Ensemble.bundled() : Ensemble.load(ensemble);
    if (!e.latencyModel().toLowerCase(Locale.ROOT).equals(latencyModel.toLowerCase(Locale.ROOT))) {
      throw new IllegalArgumentException((ensemble == null ? "--intervals" : "--ensemble " + ensemble)
          + ": the ensemble holds " + e.latencyModel() + " coefficients but the latency model is " + latencyModel);
    }
    return e;
  }
}
