package io.blis.cli;

import io.blis.engine.capacity.CapacityReport;
import io.blis.engine.capacity.CapacitySearch;
import io.blis.engine.capacity.RateWorkload;
import io.blis.engine.capacity.SloSet;
import io.blis.engine.validate.Ensemble;
import io.blis.latency.coeff.CoefficientFiles;
import io.blis.workload.inferenceperf.InferencePerfProfiles;
import io.blis.workload.synthetic.LengthSpec;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code blis capacity}: the highest request rate at which a deployment meets its latency targets,
 * its saturation rate, and with {@code --target-rate} the fewest replicas for a rate ({@link
 * CapacitySearch}).
 */
@Command(
    name = "capacity",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = "Find the highest request rate at which a deployment meets latency targets (and its saturation"
        + " rate), or with --target-rate the fewest replicas that meet them at a rate.")
final class CapacityCommand implements Callable<Integer>, RefusedOptions {

  @Spec CommandSpec spec;

  @Option(names = "--slo", required = true, paramLabel = "TARGETS",
      description = "Latency targets: ttft_p99=500ms,e2e_p99=20s,tpot_p99=50ms (statistics mean, p50, p90, p95, p99,"
          + " p999), or goodput=99%%,ttft=500ms,e2e=20s (per-request targets met by at least that share; goodput=99%% alone: each request's SLO class targets from a policy bundle).")
  String slo;

  @Option(names = "--target-rate", paramLabel = "RPS",
      description = "Also find the fewest instances (of the deployment's single pool) meeting the targets at this rate.")
  Double targetRate;

  @Option(names = "--max-instances", description = "Most instances tried with --target-rate (default: ${DEFAULT-VALUE}).")
  int maxInstances = 256;

  @Option(names = "--point-duration-s", description = "Simulated seconds of each load point (default: ${DEFAULT-VALUE}).")
  double durationS = 300;

  @Option(names = "--min-point-requests", description = "Fewest requests of a load point (default: ${DEFAULT-VALUE}).")
  long minRequests = 1000;

  @Option(names = "--max-point-requests", description = "Most requests of a load point (default: ${DEFAULT-VALUE}).")
  long maxRequests = 200_000;

  @Option(names = "--warmup", description = "Fraction of each point's arrivals left out as warm-up (default: ${DEFAULT-VALUE}).")
  double warmup = 0.2;

  @Option(names = "--tolerance", description = "Relative width of the final bracket (default: ${DEFAULT-VALUE}).")
  double tolerance = 0.01;

  @Option(names = "--start-rate", description = "First rate tried, req/s (default: ${DEFAULT-VALUE}).")
  double startRate = 1;

  @Option(names = "--min-rate", description = "Lowest rate tried, req/s (default: ${DEFAULT-VALUE}).")
  double minRate = 0.001;

  @Option(names = "--max-rate", description = "Highest rate tried, req/s (default: ${DEFAULT-VALUE}).")
  double maxRate = 100_000;

  @Option(names = "--trace", paramLabel = "FILE",
      description = "A BLIS trace as the workload shape, its arrival times scaled to each rate.")
  Path trace;

  @Option(names = "--out", paramLabel = "FILE", description = "Write the JSON report here (every point simulated).")
  Path out;

  @Mixin DeploymentOptions deployment;

  @Mixin WorkloadOptions workload = new WorkloadOptions();

  @Mixin IntervalOptions intervalOptions = new IntervalOptions();

  /** Flags of the workload that capacity searches or sets per load point. */
  private static final List<String> SEARCHED = List.of("--rate", "--num-requests", "--horizon-s");
  /** Options of a single run that a search of many runs would take and do nothing with. */
  private static final List<String> SINGLE_RUN = List.of("--results-path", "--metrics-path", "--post-hoc-detector", "--saturation-threshold-ms", "--otel-out", "--otel-step-sample-rate",
      "--otel-journey-sample-rate", "--otel-request-snapshots", "--per-request", "--trace-level", "--summarize-trace",
      "--counterfactual-k", "--fitness-weights", "--output-format", "--max-backlog", "--autoscaler", "--detectors",
      "--saturation-config", "--saturation-report", "--saturation-final-window");

  @Override
  public java.util.Collection<String> refusedOptions() {
    return java.util.stream.Stream.concat(SEARCHED.stream(), SINGLE_RUN.stream()).toList();
  }

  @Override
  public Integer call() {
    CommandLine cl = spec.commandLine();
    deployment.validate(cl);
    workload.validate(cl, trace == null ? List.of() : List.of("--trace"));
    for (String flag : List.of("--concurrency", "--think-time-ms")) {
      DeploymentOptions.require(cl, !cl.getParseResult().hasMatchedOption(flag), flag + " does not apply to blis"
          + " capacity: it searches an arrival rate, and closed-loop users have none (run them with blis run)");
    }
    for (String flag : SEARCHED) {
      DeploymentOptions.require(cl, !cl.getParseResult().hasMatchedOption(flag),
          flag + " does not apply to capacity: the rate is what it searches, and each point runs --point-duration-s");
    }
    // options of a single run that a search of many runs would take and do nothing with
    for (String flag : SINGLE_RUN) {
      DeploymentOptions.require(cl, !cl.getParseResult().hasMatchedOption(flag),
          flag + " does not apply to capacity (an option of blis run's single simulation); capacity writes its"
              + " report with --out");
    }
    DeploymentOptions.require(cl, targetRate == null || (targetRate > 0 && targetRate <= 1e6),
        "--target-rate must be in (0, 1000000] req/s, got " + targetRate);
    DeploymentOptions.require(cl, targetRate == null || !deployment.disaggregation.splits(),
        "--target-rate varies the instances of one pool; --prefill-instances and --decode-instances fix two"
            + " (run capacity once per split, or sweep them)");
    DeploymentOptions.require(cl, maxInstances >= 1 && maxInstances <= 4096,
        "--max-instances must be in 1..4096, got " + maxInstances);
    SloSet slos;
    CapacitySearch.Settings settings;
    try {
      slos = SloSet.parse(slo);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(cl, "--slo: " + e.getMessage());
    }
    try {
      settings = new CapacitySearch.Settings(durationS, minRequests, maxRequests, warmup, tolerance, startRate, maxRate,
          minRate);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(cl, e.getMessage());
    }
    if (out != null) {
      Cli.requireWritable("--out", out);
    }
    long seed = workload.effectiveSeed(cl);
    if (targetRate != null) {
      // the search may try up to that many: refused now, not after the points before it ran
      deployment.requireInstancesFit(seed, maxInstances, "--max-instances " + maxInstances);
    }
    RateWorkload rates = rateWorkload(cl);
    String size = WorkSize.capacityPoints(minRequests); // once every input is checked
    if (size != null) {
      Cli.printNotes(cl, List.of(size));
    }
    CapacityReport report;
    try (TerminalProgress progress = TerminalProgress.of("blis capacity", cl.getErr())) {
      report = search(seed, slos, settings, withProgress(rates, progress));
    } // the progress line is cleared before the answer
    cl.getOut().print(report.table());
    if (out != null) {
      Cli.write("--out", out, report.toJson());
    }
    return 0;
  }

  /** {@code w}, its load points counted on the progress line, each with its rate and requests so far. */
  private static RateWorkload withProgress(RateWorkload w, TerminalProgress progress) {
    return new RateWorkload() {
      private int points;

      @Override
      public io.blis.workload.RequestSource at(double rate, double durationS) {
        points++;
        return progress.counting(w.at(rate, durationS),
            String.format(java.util.Locale.ROOT, "load point %d at %s req/s: ", points, SloSet.trim(rate)));
      }

      @Override
      public String description() {
        return w.description();
      }
    };
  }

  private CapacityReport search(long seed, SloSet slos, CapacitySearch.Settings settings, RateWorkload rates) {
    CapacitySearch search = new CapacitySearch(
        (instances, coefficients) -> deployment.builder(seed,
            coefficients == null ? null : CoefficientFiles.toInline(coefficients), instances == 0 ? null : instances),
        rates, slos, settings);
    CapacitySearch.Found max = search.maxRate(null);
    CapacitySearch.Found sat = search.saturationRate(null);
    CapacityReport.RateInterval interval = null;
    Ensemble ensemble = intervalOptions.resolve(deployment.latencyModel());
    if (ensemble != null && Double.isFinite(max.rateRps())) {
      interval = CapacityReport.RateInterval.of(search, max.rateRps(), ensemble, deployment.distances(ensemble, seed),
          intervalOptions.level);
    }
    CapacitySearch.Replicas replicas = targetRate == null ? null : search.replicasFor(targetRate, maxInstances, null);
    return new CapacityReport(deployment.describe(seed), search, max, sat, interval,
        targetRate == null ? Double.NaN : targetRate, replicas);
  }

  /** The workload the flags select, with its rate left open. */
  private RateWorkload rateWorkload(CommandLine cl) {
    if (trace != null) {
      Cli.requireFile("--trace", trace);
      return RateWorkload.trace(trace);
    }
    long seed = workload.effectiveSeed(cl);
    if (workload.workloadSpec != null) {
      return RateWorkload.specFile(io.blis.workload.spec.WorkloadFile.load(workload.workloadSpec),
          workload.workloadSpec.getFileName().toString(), seed);
    }
    if (workload.workloadPreset != null) {
      return RateWorkload.preset(workload.workloadPreset, seed);
    }
    if (workload.inferencePerf != null) {
      return RateWorkload.inferencePerf(InferencePerfProfiles.load(workload.inferencePerf),
          workload.inferencePerf.getFileName().toString(), seed);
    }
    return RateWorkload.poissonGaussian(
        new LengthSpec(workload.promptTokens, workload.promptTokensStdev, workload.promptTokensMin, workload.promptTokensMax),
        new LengthSpec(workload.outputTokens, workload.outputTokensStdev, workload.outputTokensMin, workload.outputTokensMax),
        workload.prefixTokens, seed);
  }
}
