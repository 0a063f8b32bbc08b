package io.blis.engine.cli;

import io.blis.engine.SimulationResult;
import io.blis.engine.validate.Ensemble;
import io.blis.workload.RequestSource;
import io.blis.workload.inferenceperf.InferencePerfProfiles;
import io.blis.workload.inferenceperf.InferencePerfWorkload;
import io.blis.workload.spec.WorkloadSpec;
import io.blis.workload.synthetic.LengthSpec;
import io.blis.workload.synthetic.SyntheticWorkload;
import io.blis.workload.trace.TraceHeader;
import io.blis.workload.trace.TraceWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code blis run}: generates a workload (Poisson arrivals with Gaussian lengths by default, or a
 * workload spec, a preset or an inference-perf profile), simulates the deployment and prints the
 * result JSON; {@code --trace-out} records every request the engine pulled as a BLIS trace that
 * {@code blis replay} reads back.
 */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = "Generate a workload, simulate vLLM instance(s), print the result JSON.")
final class RunCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin DeploymentOptions deployment;

  @Mixin IntervalOptions intervalOptions = new IntervalOptions();

  // ---- default synthetic workload: Poisson arrivals, Gaussian lengths ----

  @Option(names = "--rate", description = "Mean arrival rate, requests per second (default: ${DEFAULT-VALUE}).")
  double rate = 5.0;

  @Option(names = "--num-requests", description = "Number of requests (default: ${DEFAULT-VALUE}).")
  long numRequests = 100;

  @Option(names = "--seed", description = "Random seed of the workload (default: ${DEFAULT-VALUE}).")
  long seed = 42;

  @Option(names = "--prompt-tokens", description = "Mean prompt length (default: ${DEFAULT-VALUE}).")
  double promptTokens = 512;

  @Option(names = "--prompt-tokens-stdev", description = "Prompt length standard deviation (default: ${DEFAULT-VALUE}).")
  double promptTokensStdev = 256;

  @Option(names = "--prompt-tokens-min", description = "Shortest prompt (default: ${DEFAULT-VALUE}).")
  int promptTokensMin = 2;

  @Option(names = "--prompt-tokens-max", description = "Longest prompt (default: ${DEFAULT-VALUE}).")
  int promptTokensMax = 7000;

  @Option(names = "--output-tokens", description = "Mean output length (default: ${DEFAULT-VALUE}).")
  double outputTokens = 512;

  @Option(names = "--output-tokens-stdev", description = "Output length standard deviation (default: ${DEFAULT-VALUE}).")
  double outputTokensStdev = 256;

  @Option(names = "--output-tokens-min", description = "Shortest output (default: ${DEFAULT-VALUE}).")
  int outputTokensMin = 2;

  @Option(names = "--output-tokens-max", description = "Longest output (default: ${DEFAULT-VALUE}).")
  int outputTokensMax = 7000;

  @Option(names = "--prefix-tokens",
      description = "Tokens of a prefix shared by every prompt (default: ${DEFAULT-VALUE}).")
  int prefixTokens = 0;

  // ---- other workload kinds (at most one) and the trace output ----

  @Option(names = "--workload-spec", paramLabel = "FILE",
      description = "YAML workload spec (clients, arrivals, lengths, sessions); its seed is used unless --seed is given.")
  Path workloadSpec;

  @Option(names = "--workload", paramLabel = "NAME",
      description = "Preset workload at --rate with --num-requests: chatbot, summarization, contentgen, multidoc.")
  String workloadPreset;

  @Option(names = "--inference-perf", paramLabel = "FILE",
      description = "inference-perf profile (YAML/JSON, shared_prefix data): regenerate the stream inference-perf sent.")
  Path inferencePerf;

  @Option(names = "--trace-out", paramLabel = "FILE",
      description = "Write every request the engine pulled as a BLIS trace (gzip when FILE ends in .gz), for 'blis replay'.")
  Path traceOut;

  @Option(names = "--trace-token-ids", description = "Include the prompt token ids in the --trace-out trace.")
  boolean traceTokenIds;

  /** Flags of the default synthetic workload, refused together with another workload kind. */
  private static final List<String> SYNTHETIC_FLAGS = List.of("--prompt-tokens",
      "--prompt-tokens-stdev", "--prompt-tokens-min", "--prompt-tokens-max", "--output-tokens",
      "--output-tokens-stdev", "--output-tokens-min", "--output-tokens-max", "--prefix-tokens");

  @Override
  public Integer call() {
    validate();
    Ensemble ensemble = intervalOptions.resolve(deployment.latencyModel());
    RequestSource source = traced(workloadSource());
    SimulationResult result;
    try (source) {
      result = deployment.simulate(source, effectiveSeed());
    }
    deployment.emit(spec.commandLine(), result, ensemble, intervalOptions.level, this::workloadSource,
        effectiveSeed());
    return 0;
  }

  private void validate() {
    deployment.validate(spec.commandLine());
    validateWorkloadSelection();
    require(Double.isFinite(rate) && rate > 0, "--rate must be a positive number of requests per second, got " + rate);
    require(numRequests >= 0, "--num-requests must be >= 0, got " + numRequests);
    require(prefixTokens >= 0, "--prefix-tokens must be >= 0, got " + prefixTokens);
    require(promptTokensMin >= 1 && promptTokensMin <= promptTokensMax,
        "--prompt-tokens-min must be >= 1 and <= --prompt-tokens-max, got " + promptTokensMin + " and " + promptTokensMax);
    require(outputTokensMin >= 1 && outputTokensMin <= outputTokensMax,
        "--output-tokens-min must be >= 1 and <= --output-tokens-max, got " + outputTokensMin + " and " + outputTokensMax);
    require(promptTokensStdev >= 0 && outputTokensStdev >= 0, "length standard deviations must be >= 0");
  }

  /** At most one workload kind, and no flag that the chosen kind would ignore. */
  private void validateWorkloadSelection() {
    List<String> kinds = new ArrayList<>();
    if (workloadSpec != null) {
      kinds.add("--workload-spec");
    }
    if (workloadPreset != null) {
      kinds.add("--workload");
    }
    if (inferencePerf != null) {
      kinds.add("--inference-perf");
    }
    require(kinds.size() <= 1, "give at most one workload kind (--workload-spec, --workload or"
        + " --inference-perf), got " + String.join(" and ", kinds));
    require(traceOut != null || !traceTokenIds, "--trace-token-ids needs --trace-out");
    if (kinds.isEmpty()) {
      return;
    }
    String kind = kinds.get(0);
    List<String> ignored = new ArrayList<>(SYNTHETIC_FLAGS);
    if (workloadPreset == null) {
      ignored.add("--rate");
      ignored.add("--num-requests");
    }
    for (String flag : ignored) {
      require(!spec.commandLine().getParseResult().hasMatchedOption(flag),
          flag + " does not apply to " + kind + (workloadPreset == null
              ? " (the file defines the rate, lengths and number of requests)"
              : " (the preset defines the lengths; --rate and --num-requests apply)"));
    }
    if (workloadSpec != null) {
      Cli.requireFile("--workload-spec", workloadSpec);
    }
    if (inferencePerf != null) {
      Cli.requireFile("--inference-perf", inferencePerf);
    }
  }

  private void require(boolean ok, String message) {
    DeploymentOptions.require(spec.commandLine(), ok, message);
  }

  /** --seed when given; for a workload spec without --seed, the spec's own seed. */
  private long effectiveSeed() {
    if (workloadSpec != null && !spec.commandLine().getParseResult().hasMatchedOption("--seed")) {
      return WorkloadSpec.load(workloadSpec).seed();
    }
    return seed;
  }

  private RequestSource workloadSource() {
    if (workloadSpec != null) {
      return WorkloadSpec.load(workloadSpec).source(effectiveSeed());
    }
    if (workloadPreset != null) {
      require(numRequests >= 1, "--num-requests must be at least 1 with --workload, got " + numRequests);
      return WorkloadSpec.preset(workloadPreset, rate, numRequests, seed).source();
    }
    if (inferencePerf != null) {
      return InferencePerfWorkload.synthetic(InferencePerfProfiles.load(inferencePerf), seed);
    }
    return SyntheticWorkload.poissonGaussian(rate, numRequests,
        new LengthSpec(promptTokens, promptTokensStdev, promptTokensMin, promptTokensMax),
        new LengthSpec(outputTokens, outputTokensStdev, outputTokensMin, outputTokensMax),
        prefixTokens, seed);
  }

  /** With --trace-out, wraps {@code source} so every request it hands out is written. */
  private RequestSource traced(RequestSource source) {
    if (traceOut == null) {
      return source;
    }
    TraceHeader header = TraceHeader.of(effectiveSeed(), traceTokenIds, workloadDescription());
    return new TracingSource(source, TraceWriter.create(Cli.parentsCreated("--trace-out", traceOut), header));
  }

  /** Free text for the trace header: which workload, with which seed. */
  private String workloadDescription() {
    String what;
    if (workloadSpec != null) {
      what = "workload spec " + workloadSpec.getFileName();
    } else if (workloadPreset != null) {
      what = "preset " + workloadPreset + " at " + rate + " req/s, " + numRequests + " requests";
    } else if (inferencePerf != null) {
      what = "inference-perf profile " + inferencePerf.getFileName();
    } else {
      what = "poisson-gaussian at " + rate + " req/s, " + numRequests + " requests";
    }
    return "blis run: " + what + ", seed " + effectiveSeed();
  }
}
