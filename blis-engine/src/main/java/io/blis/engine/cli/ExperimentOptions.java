package io.blis.engine.cli;

import io.blis.engine.validate.EngineRunSimulator;
import io.blis.engine.validate.Experiment;
import io.blis.engine.validate.ExperimentsFile;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import picocli.CommandLine.Option;

/** Options shared by {@code blis validate} and {@code blis calibrate}: which runs, how driven. */
final class ExperimentOptions {

  @Option(names = "--experiments", required = true, paramLabel = "FILE",
      description = "Experiments file (schema of shared/groundtruth/experiments.json); paths inside are relative to it.")
  Path experiments;

  @Option(names = "--mode", defaultValue = "replay", paramLabel = "replay|synthetic",
      description = "replay: real arrival times and input lengths from the trace; synthetic: regenerated from the"
          + " workload definition (default: ${DEFAULT-VALUE}).")
  String mode;

  @Option(names = "--only", paramLabel = "REGEX", description = "Only experiments whose id matches (find).")
  String only;

  @Option(names = "--threads", paramLabel = "N", description = "Simulations run at once (default: available processors).")
  Integer threads;

  @Option(names = "--seed", defaultValue = "42", description = "Seed of the workloads (and of the search) (default: ${DEFAULT-VALUE}).")
  long seed;

  EngineRunSimulator.Mode mode() {
    return EngineRunSimulator.Mode.parse(mode);
  }

  int threads() {
    if (threads != null && threads < 1) {
      throw new IllegalArgumentException("--threads must be at least 1, got " + threads);
    }
    return threads == null ? Runtime.getRuntime().availableProcessors() : threads;
  }

  /** The experiments of the file whose id matches {@code --only}; none is an error. */
  List<Experiment> experiments() {
    List<Experiment> all = ExperimentsFile.read(experiments);
    if (only == null) {
      return all;
    }
    Pattern p;
    try {
      p = Pattern.compile(only);
    } catch (PatternSyntaxException e) {
      throw new IllegalArgumentException("--only: invalid regular expression: " + e.getDescription());
    }
    List<Experiment> sel = all.stream().filter(e -> p.matcher(e.id()).find()).toList();
    if (sel.isEmpty()) {
      throw new IllegalArgumentException("--only '" + only + "' matches no experiment id in " + experiments);
    }
    return sel;
  }
}
