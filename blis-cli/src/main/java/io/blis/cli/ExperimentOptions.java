package io.blis.cli;

import io.blis.engine.validate.EngineRunSimulator;
import io.blis.engine.validate.Experiment;
import io.blis.engine.validate.ExperimentsFile;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import picocli.CommandLine.Option;

/** Options shared by {@code blis validate} and {@code blis calibrate}: which runs, how driven. */
final class ExperimentOptions {

  @Option(names = "--experiments", required = true, paramLabel = "FILE",
      description = "Experiments file (schema of shared/groundtruth/experiments.json); paths inside are relative to it."
          + " Repeat to combine files (ids must be unique across them).")
  List<Path> experiments;

  @Option(names = "--mode", defaultValue = "replay", paramLabel = "replay|synthetic",
      description = "replay: real arrival times and input lengths from the trace; synthetic: regenerated from the"
          + " workload definition (default: ${DEFAULT-VALUE}).")
  String mode;

  @Option(names = "--only", paramLabel = "REGEX", description = "Only experiments whose id matches (find).")
  String only;

  @Option(names = "--exclude", paramLabel = "REGEX", description = "Leave out experiments whose id matches (find).")
  String exclude;

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

  /** The files as given, joined for messages and provenance lines. */
  String files() {
    return experiments.stream().map(Path::toString).collect(Collectors.joining(" --experiments "));
  }

  /**
   * The experiments of the files whose id matches {@code --only}; none is an error. Experiments
   * without a per-request trace are noted on {@code notes}: replay mode regenerates them from their
   * workload definition and compares whole runs.
   */
  List<Experiment> experiments(PrintWriter notes) {
    List<Experiment> all = new ArrayList<>();
    Map<String, Path> seen = new HashMap<>();
    experiments.forEach(file -> Cli.requireFile("--experiments", file));
    for (Path file : experiments) {
      for (Experiment e : ExperimentsFile.read(file)) {
        Path before = seen.putIfAbsent(e.id(), file);
        if (before != null) {
          throw new IllegalArgumentException(file + ": experiment id '" + e.id() + "' is also in " + before);
        }
        all.add(e);
      }
    }
    all = selected(all);
    List<String> traceless = all.stream().filter(e -> e.trace().isEmpty()).map(Experiment::id).toList();
    if (mode() == EngineRunSimulator.Mode.REPLAY && !traceless.isEmpty()) {
      notes.println("note: " + traceless.size() + " experiment(s) without per_request_trace are regenerated from"
          + " their workload definition and compared as whole runs: " + String.join(", ", traceless));
    }
    return List.copyOf(all);
  }

  private List<Experiment> selected(List<Experiment> all) {
    Pattern keep = only == null ? null : compile("--only", only);
    Pattern drop = exclude == null ? null : compile("--exclude", exclude);
    List<Experiment> sel = all.stream()
        .filter(e -> keep == null || keep.matcher(e.id()).find())
        .filter(e -> drop == null || !drop.matcher(e.id()).find())
        .toList();
    if (sel.isEmpty()) {
      throw new IllegalArgumentException((only == null ? "" : "--only '" + only + "' ")
          + (exclude == null ? "" : "--exclude '" + exclude + "' ") + "leaves no experiment of " + files());
    }
    return sel;
  }

  private static Pattern compile(String flag, String regex) {
    try {
      return Pattern.compile(regex);
    } catch (PatternSyntaxException e) {
      throw new IllegalArgumentException(flag + ": invalid regular expression: " + e.getDescription());
    }
  }
}
