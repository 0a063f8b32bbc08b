package io.blis.cli;

import io.blis.engine.result.SimulationResult;
import io.blis.engine.validate.Ensemble;
import io.blis.workload.RequestSource;
import io.blis.workload.inferenceperf.InferencePerfProfile;
import io.blis.workload.inferenceperf.InferencePerfProfiles;
import io.blis.workload.inferenceperf.InferencePerfWorkload;
import io.blis.workload.trace.NotedSource;
import io.blis.workload.trace.TokenArrayTraceReader;
import io.blis.workload.trace.TraceReader;
import io.blis.workload.trace.TraceV2Reader;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code blis replay}: simulates the deployment on a recorded trace and prints the result JSON. The
 * trace is a BLIS trace (as written by {@code blis run --trace-out}), a Go BLIS TraceV2 pair or
 * trace CSV with token arrays (docs/go-blis.md), or a ground-truth inference-perf CSV ({@code
 * requests/<id>.csv.gz}) together with the profile that produced it.
 */
@Command(
    name = "replay",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = "Replay a BLIS trace, a Go BLIS trace (TraceV2 pair, or trace CSV with token arrays), or a"
        + " ground-truth inference-perf CSV with its profile, on simulated vLLM instance(s); print the result JSON.")
final class ReplayCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(names = "--trace", paramLabel = "FILE",
      description = "BLIS trace (blis run --trace-out); a Go BLIS TraceV2 (PREFIX.yaml or PREFIX.csv, the other found"
          + " beside it) or Go BLIS trace CSV with token arrays; or a ground-truth CSV (.csv.gz) with --inference-perf or"
          + " --experiments/--experiment.")
  Path trace;

  @Option(names = "--trace-header", paramLabel = "FILE",
      description = "Go BLIS: the TraceV2 header (PREFIX.yaml); with --trace-data, or the data found beside it.")
  Path traceHeader;

  @Option(names = "--trace-data", paramLabel = "FILE",
      description = "Go BLIS: the TraceV2 requests (PREFIX.csv); with --trace-header, or the header found beside it.")
  Path traceData;

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

  /** The Go BLIS TraceV2 pair (header, data) to replay, or null for the other kinds. */
  private Path[] traceV2;
  /** Whether --trace is Go BLIS's trace CSV with token arrays. */
  private boolean tokenArrays;
  /** Whether the TraceV2 header's kv_offload block was applied. */
  private boolean headerOffload;

  @Override
  public Integer call() {
    deployment.validate(spec.commandLine());
    boolean goPair = traceHeader != null || traceData != null;
    require(trace != null || goPair, "give --trace FILE, or Go BLIS's --trace-header/--trace-data");
    require(trace == null || !goPair, "give --trace or --trace-header/--trace-data, not both");
    boolean hasProfile = inferencePerf != null || experiments != null || experiment != null;
    if (goPair) {
      Path given = traceHeader != null ? Cli.requireFile("--trace-header", traceHeader)
          : Cli.requireFile("--trace-data", traceData);
      Path[] pair = TraceV2Reader.pair(given);
      traceV2 = new Path[] {traceHeader != null ? traceHeader : pair[0],
          traceData != null ? Cli.requireFile("--trace-data", traceData) : pair[1]};
    } else {
      Cli.requireFile("--trace", trace);
      if (!TraceReader.isBlisTrace(trace) && (TraceV2Reader.isHeader(trace) || TraceV2Reader.isData(trace))) {
        traceV2 = TraceV2Reader.pair(trace);
      }
      tokenArrays = traceV2 == null && !TraceReader.isBlisTrace(trace) && TokenArrayTraceReader.isTokenArrayTrace(trace);
    }
    require(!hasProfile || (traceV2 == null && !tokenArrays), "--inference-perf, --experiments and --experiment apply"
        + " only to a ground-truth CSV; a Go BLIS trace carries its own prompt lengths");
    if (traceV2 != null) {
      headerOffload = deployment.offloadFromTraceHeader(spec.commandLine(), traceV2[0]);
    }
    if (traceV2 != null && deployment.resultsPath != null) {
      // as Go BLIS's replay --results-path: the per-request results blis calibrate --sim-results reads
      deployment.perRequest = true;
    }
    Ensemble ensemble = intervalOptions.resolve(deployment.latencyModel());
    long providerSeed = seed;
    if (traceV2 != null || tokenArrays) {
      SimulationResult result;
      try (RequestSource source = goSource(true)) {
        result = deployment.simulate(source, providerSeed);
      }
      RefusedRequests.check(spec.commandLine(), result, deployment.loraSpec() != null);
      deployment.emit(spec.commandLine(), result, ensemble, intervalOptions.level, () -> goSource(false), providerSeed);
      return 0;
    }
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
    RefusedRequests.check(spec.commandLine(), result, deployment.loraSpec() != null);
    deployment.emit(spec.commandLine(), result, ensemble, intervalOptions.level, this::source, providerSeed);
    return 0;
  }

  /** A fresh source over a Go BLIS trace; its notes are printed when {@code notes}. */
  private RequestSource goSource(boolean notes) {
    NotedSource s = traceV2 != null ? TraceV2Reader.open(traceV2[0], traceV2[1], seed) : TokenArrayTraceReader.open(trace);
    if (notes) {
      // a header's kv_offload is applied (offloadFromTraceHeader), not a note
      Cli.printNotes(spec.commandLine(), headerOffload
          ? s.notes().stream().filter(n -> !n.contains(": kv_offload has no meaning here")).toList() : s.notes());
    }
    return s.source();
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
