package io.blis.engine.cli;

import io.blis.engine.result.SimulationResult;
import io.blis.engine.validate.Ensemble;
import io.blis.workload.RequestSource;
import io.blis.workload.inferenceperf.InferencePerfProfile;
import io.blis.workload.inferenceperf.InferencePerfProfiles;
import io.blis.workload.inferenceperf.InferencePerfWorkload;
import io.blis.workload.trace.TraceReader;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code blis replay}: simulates the deployment on a recorded trace and prints the result JSON. The
 * trace is a BLIS trace (as written by {@code blis run --trace-out}), or a ground-truth
 * inference-perf CSV ({@code requests/<id>.csv.gz}) together with the profile that produced it.
 */
@Command(
    name = "replay",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = "Replay a BLIS trace (or a ground-truth inference-perf CSV with its profile) on"
        + " simulated vLLM instance(s), print the result JSON.")
final class ReplayCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(names = "--trace", required = true, paramLabel = "FILE",
      description = "BLIS trace (blis run --trace-out), or a ground-truth CSV (.csv.gz) with --inference-perf or --experiments/--experiment.")
  Path trace;

  @Option(names = "--inference-perf", paramLabel = "FILE",
      description = "inference-perf profile of a ground-truth CSV: prompt structure, output length, timeout.")
  Path inferencePerf;

  @Option(names = "--experiments", paramLabel = "FILE",
      description = "Experiments file (schema of shared/groundtruth/experiments.json) holding the profile of --experiment.")
  Path experiments;

  @Option(names = "--experiment", paramLabel = "ID",
      description = "Experiment id in --experiments whose workload produced the ground-truth CSV.")
  String experiment;

  @Option(names = "--seed",
      description = "Seed of the prompt contents of a ground-truth CSV, also passed to the providers"
          + " (default: a BLIS trace's token_seed, which is the seed of the run that wrote it; else ${DEFAULT-VALUE}).")
  long seed = 42;

  @Mixin DeploymentOptions deployment;

  @Mixin IntervalOptions intervalOptions = new IntervalOptions();

  @Override
  public Integer call() {
    deployment.validate(spec.commandLine());
    Cli.requireFile("--trace", trace);
    Ensemble ensemble = intervalOptions.resolve(deployment.latencyModel());
    boolean hasProfile = inferencePerf != null || experiments != null || experiment != null;
    long providerSeed = seed;
    if (TraceReader.isBlisTrace(trace)) {
      require(!hasProfile, "--trace " + trace + " is a BLIS trace, which carries its own prompt"
          + " structure: --inference-perf, --experiments and --experiment apply only to a ground-truth CSV");
      if (!spec.commandLine().getParseResult().hasMatchedOption("--seed")) {
        providerSeed = TraceReader.header(trace).tokenSeed();
      }
    }
    SimulationResult result;
    try (RequestSource source = source()) {
      result = deployment.simulate(source, providerSeed);
    }
    deployment.emit(spec.commandLine(), result, ensemble, intervalOptions.level, this::source, providerSeed);
    return 0;
  }

  /** A fresh request source over the trace (opened again for each member of an interval ensemble). */
  private RequestSource source() {
    return TraceReader.isBlisTrace(trace) ? TraceReader.open(trace)
        : InferencePerfWorkload.replay(profile(), trace, seed);
  }

  /** The profile of a ground-truth CSV: --inference-perf, or --experiments with --experiment. */
  private InferencePerfProfile profile() {
    require(inferencePerf != null || experiments != null || experiment != null,
        "--trace " + trace + " is not a BLIS trace (its first line does not start with '# blis-trace');"
            + " to replay a ground-truth inference-perf CSV give --inference-perf FILE or"
            + " --experiments FILE --experiment ID");
    require(inferencePerf == null || (experiments == null && experiment == null),
        "give either --inference-perf or --experiments/--experiment, not both");
    if (inferencePerf != null) {
      return InferencePerfProfiles.load(Cli.requireFile("--inference-perf", inferencePerf));
    }
    require(experiments != null && experiment != null, "--experiments and --experiment go together");
    return InferencePerfProfiles.fromExperiments(Cli.requireFile("--experiments", experiments), experiment);
  }

  private void require(boolean ok, String message) {
    DeploymentOptions.require(spec.commandLine(), ok, message);
  }
}
