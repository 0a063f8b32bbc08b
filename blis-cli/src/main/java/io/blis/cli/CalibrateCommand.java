package io.blis.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.api.Coefficients;
import io.blis.cli.calibrate.SimResults;
import io.blis.cli.calibrate.TraceCalibration;
import io.blis.engine.validate.Calibrator;
import io.blis.engine.validate.CalibrationStage;
import io.blis.engine.validate.CoefficientWriter;
import io.blis.engine.validate.EngineRunSimulator;
import io.blis.engine.validate.Ensemble;
import io.blis.engine.validate.EnsembleRuns;
import io.blis.engine.validate.Experiment;
import io.blis.engine.validate.ExperimentComparison;
import io.blis.engine.validate.ParameterSpace;
import io.blis.engine.validate.PredictionInterval;
import io.blis.engine.validate.TrainedPhysicsCalibration;
import io.blis.engine.validate.ValidationReport;
import io.blis.latency.coeff.CoefficientFiles;
import io.blis.latency.physics.TrainedPhysicsCoefficients;
import io.blis.workload.trace.TraceV2Reader;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Function;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code blis calibrate}: fits the trained-physics coefficients to an experiments file by
 * simulation in the loop (staged CMA-ES + BOBYQA within physically plausible bounds), writes the
 * coefficient file, validates the fit on whole runs and optionally cross-validates it.
 *
 * <p>With Go BLIS's {@code --trace-header}, {@code --trace-data} and {@code --sim-results} it does
 * what Go BLIS's {@code calibrate} does instead: compares the latencies of an observed TraceV2 with
 * a replay of it, request by request, and writes Go BLIS's calibration report ({@link
 * TraceCalibration}).
 */
@Command(
    name = "calibrate",
    mixinStandardHelpOptions = true,
    description = {"Fits trained-physics coefficients to measured runs by simulation in the loop (--experiments).",
        "With Go BLIS's --trace-header, --trace-data and --sim-results: compares an observed trace's latencies with"
            + " a replay of it request by request and writes Go BLIS's calibration report (--report)."})
public final class CalibrateCommand implements Callable<Integer> {

  CommandSpec spec;

  @Mixin ExperimentOptions run = new ExperimentOptions();

  /**
   * Injected once the options (the mixin's included) are in the model: --experiments is required
   * only for fitting, the comparison of a trace goes without it ({@link #call} checks).
   */
  @Spec
  void spec(CommandSpec command) {
    this.spec = command;
    OptionSpec o = command.findOption("--experiments");
    if (o != null && o.required()) {
      command.remove(o);
      command.addOption(OptionSpec.builder(o).required(false).build());
    }
  }

  // ---- Go BLIS's comparison of an observed trace with its replay ----

  @Option(names = "--trace-header", paramLabel = "FILE",
      description = "Go BLIS: the observed TraceV2 header (blis observe); with --trace-data (or the data found beside it).")
  Path traceHeader;

  @Option(names = "--trace-data", paramLabel = "FILE",
      description = "Go BLIS: the observed TraceV2 requests (blis observe); with --trace-header (or the header found beside it).")
  Path traceData;

  @Option(names = "--sim-results", paramLabel = "FILE",
      description = "Go BLIS: the replay of that trace: blis replay --trace-header/--trace-data --results-path FILE (its"
          + " per-request records), or Go BLIS's replay results array.")
  Path simResults;

  @Option(names = "--itl-data", paramLabel = "FILE",
      description = "Go BLIS: the per-chunk times of blis observe --record-itl (request_id,chunk_index,timestamp_us);"
          + " adds the itl metric.")
  Path itlData;

  @Option(names = "--warmup-requests", paramLabel = "N",
      description = "Go BLIS: leave out requests with an id below N; -1 = the header's warm_up_requests (default: ${DEFAULT-VALUE}).")
  int warmupRequests = -1;

  @Option(names = "--network-rtt-us", paramLabel = "US",
      description = "Go BLIS: round trip added to the simulated latencies, microseconds; -1 = the header's"
          + " network.measured_rtt_ms (default: ${DEFAULT-VALUE}).")
  long networkRttUs = -1;

  @Option(names = "--network-bandwidth-mbps", paramLabel = "MBPS",
      description = "Go BLIS: client link bandwidth for the upload (prompt) and download (output) delays, 4 bytes a token;"
          + " 0 = none (default: ${DEFAULT-VALUE}).")
  double networkBandwidthMbps = 0;

  @Option(names = "--sim-metrics", paramLabel = "FILE",
      description = "Go BLIS: the simulation's aggregate KV cache hit rate (cache_hit_rate of a --metrics-path file,"
          + " or engine.kv_token_hit_rate of a result JSON), compared with the header's observed_kv_metrics (default:"
          + " --sim-results when it is a result JSON).")
  Path simMetrics;

  @Option(names = "--hit-rate-tolerance-pp", paramLabel = "PP",
      description = "Go BLIS: hit-rate error (percentage points) within which the hit_rate verdict passes (default: ${DEFAULT-VALUE}).")
  double hitRateTolerancePp = 5.0;

  @Option(names = "--ttft-mape-threshold", paramLabel = "X",
      description = "Go BLIS: TTFT MAPE (fraction) within which the ttft_tolerance verdict passes (default: ${DEFAULT-VALUE}).")
  double ttftMapeThreshold = 0.15;

  /** Go BLIS's calibrate flags this one refuses, with why. */
  private static final Map<String, String> REFUSED = ordered(
      "--slo-ttft", "Go BLIS's goodput comparison in calibrate is not available here (blis run/replay report goodput"
          + " against the SLO targets of --policy-config)",
      "--slo-itl", "Go BLIS's goodput comparison in calibrate is not available here (blis run/replay report goodput"
          + " against the SLO targets of --policy-config)",
      "--slo-e2e", "Go BLIS's goodput comparison in calibrate is not available here (blis run/replay report goodput"
          + " against the SLO targets of --policy-config)",
      "--adapter-reference", "Go BLIS's comparison with its Digital Twin's adapter-cost reference is not available here",
      "--sim-metrics-blind", "Go BLIS's comparison with its Digital Twin's adapter-cost reference is not available here",
      "--adapter-mape-threshold", "Go BLIS's comparison with its Digital Twin's adapter-cost reference is not available here");

  @Option(names = "--slo-ttft", hidden = true) String refusedSloTtft;
  @Option(names = "--slo-itl", hidden = true) String refusedSloItl;
  @Option(names = "--slo-e2e", hidden = true) String refusedSloE2e;
  @Option(names = "--adapter-reference", hidden = true) String refusedAdapterReference;
  @Option(names = "--sim-metrics-blind", hidden = true) String refusedSimMetricsBlind;
  @Option(names = "--adapter-mape-threshold", hidden = true) String refusedAdapterMapeThreshold;

  private static Map<String, String> ordered(String... kv) {
    Map<String, String> m = new java.util.LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put(kv[i], kv[i + 1]);
    }
    return m;
  }

  /** Options of the comparison of a trace only. */
  private static final List<String> TRACE_ONLY = List.of("--trace-header", "--trace-data", "--sim-results",
      "--itl-data", "--warmup-requests", "--network-rtt-us", "--network-bandwidth-mbps", "--sim-metrics",
      "--hit-rate-tolerance-pp", "--ttft-mape-threshold");

  /** Options of the fitting only. */
  private static final List<String> FIT_ONLY = List.of("--experiments", "--mode", "--only", "--exclude", "--threads",
      "--seed", "--out", "--start", "--fix", "--tie", "--include-saturated", "--subsample", "--joint-subsample",
      "--budget", "--sigma", "--cross-validate", "--cv-out", "--cv-budget", "--resume", "--cv-only");


  @Option(names = "--out", defaultValue = "calibrated-coefficients.yaml", paramLabel = "FILE",
      description = "Coefficient file to write (default: ${DEFAULT-VALUE}).")
  Path out;

  @Option(names = "--report", paramLabel = "FILE",
      description = "Write the validation JSON of the fitted coefficients (all experiments, whole runs) here; with"
          + " --trace-header/--trace-data/--sim-results, the calibration report JSON (required).")
  Path report;

  @Option(names = "--start", paramLabel = "FILE|INLINE",
      description = "Coefficients to start from (default: the bundled trained-physics ones).")
  String start;

  @Option(names = "--fix", split = ",", paramLabel = "NAME",
      description = "Coefficients to keep at their --start value instead of searching them (comma-separated names).")
  List<String> fix = List.of();

  @Option(names = "--tie", split = ",", paramLabel = "NAME=OTHER",
      description = "Coefficients that take the value of another instead of being searched (comma-separated"
          + " NAME=OTHER pairs), e.g. decode_memory=weight_load: KV reads stream like the weights.")
  List<String> tie = List.of();

  @Option(names = "--include-saturated", description = "Also fit to saturated (overloaded) runs.")
  boolean includeSaturated;

  @Option(names = "--subsample", defaultValue = "400", paramLabel = "N",
      description = "Requests per load stage simulated in the decode and TTFT search stages; 0 = whole runs (default: ${DEFAULT-VALUE}).")
  int subsample;

  @Option(names = "--joint-subsample", paramLabel = "N",
      description = "Requests per load stage simulated in the final joint search stage; 0 = whole runs "
          + "(default: twice --subsample).")
  Integer jointSubsample;

  @Option(names = "--budget", defaultValue = "1.0", paramLabel = "X",
      description = "Multiplier of the evaluation budgets of the search stages (default: ${DEFAULT-VALUE}).")
  double budget;

  @Option(names = "--sigma", defaultValue = "0.01", paramLabel = "X",
      description = "Initial CMA-ES step as a fraction of each coefficient's range (default: ${DEFAULT-VALUE}).")
  double sigma;

  @Option(names = "--cross-validate", defaultValue = "none", paramLabel = "none|model|workload|both",
      description = "Leave-one-model-out and/or leave-one-workload-out refits with held-out errors (default: ${DEFAULT-VALUE}).")
  String crossValidate;

  @Option(names = "--cv-out", paramLabel = "PREFIX",
      description = "Write held-out validation JSON to PREFIX-model.json / PREFIX-workload.json, and each fold's "
          + "coefficients to PREFIX-model-fold-GROUP.yaml as soon as the fold is done.")
  String cvOut;

  @Option(names = "--cv-budget", paramLabel = "X",
      description = "Budget multiplier of the cross-validation refits (default: --budget).")
  Double cvBudget;

  @Option(names = "--resume",
      description = "With --cv-out: folds whose coefficient file PREFIX-KIND-fold-GROUP.yaml exists are read, not refitted.")
  boolean resume;

  @Option(names = "--cv-only",
      description = "Only cross-validate: skip the fit to all runs (--out and --report are not written).")
  boolean cvOnly;

  @Override
  public Integer call() {
    for (String flag : REFUSED.keySet()) {
      require(!given(flag), flag + ": " + REFUSED.get(flag));
    }
    if (given("--trace-header") || given("--trace-data") || given("--sim-results")) {
      return compareTrace();
    }
    for (String flag : TRACE_ONLY) {
      require(!given(flag), flag + " applies only to comparing an observed trace with its replay: give it with"
          + " --trace-header, --trace-data and --sim-results");
    }
    require(run.experiments != null && !run.experiments.isEmpty(), "Missing required option: '--experiments=FILE'"
        + " (to fit coefficients; or Go BLIS's --trace-header, --trace-data and --sim-results to compare an observed"
        + " trace with its replay)");
    return fit();
  }

  private boolean given(String flag) {
    return spec.commandLine().getParseResult().hasMatchedOption(flag);
  }

  private void require(boolean ok, String message) {
    DeploymentOptions.require(spec.commandLine(), ok, message);
  }

  /** Go BLIS's calibrate: the observed trace against the replay of it, written to --report. */
  private int compareTrace() {
    require(!given("--experiments"), "give --experiments (fit coefficients) or --trace-header/--trace-data/--sim-results"
        + " (compare an observed trace with its replay), not both");
    for (String flag : FIT_ONLY) {
      require(!given(flag), flag + " applies only to fitting coefficients (--experiments), not to comparing an"
          + " observed trace (--trace-header/--trace-data/--sim-results)");
    }
    require(traceHeader != null || traceData != null, "--trace-header and --trace-data are required with"
        + " --sim-results (the observed TraceV2 pair, blis observe)");
    require(simResults != null, "--sim-results is required with --trace-header/--trace-data (the replay of the"
        + " trace: blis replay --trace-header H --trace-data D --results-path FILE)");
    require(report != null, "--report is required with --trace-header/--trace-data/--sim-results (where the"
        + " calibration report JSON goes)");
    require(networkRttUs >= -1, "--network-rtt-us must be >= 0 (or -1: the trace header's), got " + networkRttUs);
    require(warmupRequests >= -1, "--warmup-requests must be >= 0 (or -1: the trace header's), got " + warmupRequests);
    require(Double.isFinite(networkBandwidthMbps) && networkBandwidthMbps >= 0,
        "--network-bandwidth-mbps must be a finite number >= 0, got " + networkBandwidthMbps);
    require(Double.isFinite(hitRateTolerancePp) && hitRateTolerancePp >= 0,
        "--hit-rate-tolerance-pp must be a finite number >= 0, got " + hitRateTolerancePp);
    require(Double.isFinite(ttftMapeThreshold) && ttftMapeThreshold >= 0,
        "--ttft-mape-threshold must be a finite number >= 0, got " + ttftMapeThreshold);
    Path given = traceHeader != null ? Cli.requireFile("--trace-header", traceHeader)
        : Cli.requireFile("--trace-data", traceData);
    Path header = traceHeader;
    Path data = traceData != null ? Cli.requireFile("--trace-data", traceData) : null;
    if (header == null || data == null) {
      Path[] pair = TraceV2Reader.pair(given);
      header = header != null ? header : pair[0];
      data = data != null ? data : pair[1];
    }
    Cli.requireFile("--sim-results", simResults);
    if (itlData != null) {
      Cli.requireFile("--itl-data", itlData);
    }
    if (simMetrics != null) {
      Cli.requireFile("--sim-metrics", simMetrics);
    }
    Cli.requireWritable("--report", report);
    TraceV2Reader.Recorded trace = TraceV2Reader.recorded(header, data);
    List<SimResults.SimResult> sims = SimResults.read("--sim-results", simResults);
    List<TraceV2Reader.ItlChunk> itl = itlData == null ? null : TraceV2Reader.itl(itlData);
    int warmUp = warmupRequests == -1 ? trace.warmUpRequests() : warmupRequests;
    long rtt = networkRttUs == -1 ? (long) (trace.measuredRttMs() * 1000) : networkRttUs;
    TraceCalibration c = TraceCalibration.compare(trace.rows(), sims, itl,
        new TraceCalibration.Config(warmUp, rtt, networkBandwidthMbps));
    List<String> notes = new ArrayList<>();
    if (c.matched() == 0 && c.untimed() == 0) {
      throw new IllegalArgumentException("no request id of " + data + " (" + trace.rows().size() + " rows, "
          + c.warmUpExcluded() + " of them warm-up) is among the " + sims.size() + " completed requests of "
          + simResults + ": --sim-results must be a replay of this trace");
    }
    if (c.matched() == 0) {
      throw new IllegalArgumentException("none of the " + c.untimed() + " requests of " + data + " that match"
          + " simulated ones has usable times (first_chunk_time_us and last_chunk_time_us set, not before"
          + " send_time_us): nothing to compare");
    }
    if (c.untimed() > 0) {
      notes.add(data + ": " + c.untimed() + " matched request(s) without usable times (no chunk recorded, or a"
          + " chunk time before the send time) are counted as unmatched");
    }
    if (itl != null && c.itlPairs() == 0) {
      notes.add(itlData + ": no compared request has two or more chunks with a non-negative gap: no itl metric");
    }
    if (trace.goodputTargets()) {
      notes.add(header + ": goodput_slo_targets: Go BLIS's goodput comparison in calibrate is not available here");
    }
    ObjectNode hit = null;
    TraceV2Reader.ObservedKvMetrics kv = trace.observedKv();
    if (kv != null) {
      Path source = simMetrics != null ? simMetrics : simResults;
      java.util.OptionalDouble simRate = SimResults.hitRate(simMetrics != null ? "--sim-metrics" : "--sim-results",
          source);
      if (simRate.isPresent()) {
        hit = TraceCalibration.hitRate(kv.hitRate(), simRate.getAsDouble(), hitRateTolerancePp, kv.source());
      } else {
        notes.add(header + ": observed_kv_metrics: the hit-rate comparison is skipped: " + source + " has no cache"
            + " hit rate (give --sim-metrics with a result JSON of the replay)");
      }
    } else if (simMetrics != null) {
      notes.add("--sim-metrics: " + header + " has no observed_kv_metrics (blis observe --scrape-kv-metrics): no"
          + " hit-rate comparison");
    }
    Cli.printNotes(spec.commandLine(), notes);
    Cli.write("--report", report, c.reportJson(hit, ttftMapeThreshold));
    PrintWriter o = spec.commandLine().getOut();
    o.println("Calibration report written to " + report);
    o.printf(Locale.ROOT, "  Matched pairs: %d (warm-up excluded: %d, unmatched real: %d, unmatched sim: %d)%n",
        c.matched(), c.warmUpExcluded(), c.unmatchedReal(), c.unmatchedSim());
    for (String metric : List.of("ttft", "e2e", "itl")) {
      TraceCalibration.Stats st = c.stats(metric);
      if (st == null) {
        continue;
      }
      o.printf(Locale.ROOT, "  %-4s real mean %.0f us, sim mean %.0f us, error %+.0f us (%.1f%%); p99 real %.0f us,"
              + " sim %.0f us; MAPE %.1f%%, Pearson r %.3f, %s, %s%n", metric.toUpperCase(Locale.ROOT) + ":",
          st.realMean(), st.simMean(), st.meanError(),
          st.realMean() > 0 ? 100 * Math.abs(st.meanError()) / st.realMean() : 0, st.realP99(), st.simP99(),
          100 * st.mape(), st.pearsonR(), st.biasDirection().isEmpty() ? "no bias" : st.biasDirection(), st.quality());
    }
    if (hit != null) {
      o.printf(Locale.ROOT, "  KV hit rate (source=%s): real %.4f, sim %.4f, error %.2f pp (tolerance %.2f pp) [%s]%n",
          kv.source(), hit.get("real_hit_rate").asDouble(), hit.get("sim_hit_rate").asDouble(),
          hit.get("abs_error_pp").asDouble(), hitRateTolerancePp, hit.get("within").asBoolean() ? "WITHIN" : "EXCEEDS");
    }
    TraceCalibration.Stats t = c.stats("ttft");
    o.printf(Locale.ROOT, "  TTFT MAPE %.1f%% (threshold %.1f%%) [%s]%n", 100 * t.mape(), 100 * ttftMapeThreshold,
        t.mape() <= ttftMapeThreshold ? "WITHIN" : "EXCEEDS");
    o.flush();
    return 0;
  }

  /** Fits the coefficients to --experiments. */
  private int fit() {
    EngineRunSimulator.Mode m = run.mode();
    if (subsample < 0) {
      throw new IllegalArgumentException("--subsample must be >= 0, got " + subsample);
    }
    if (jointSubsample != null && jointSubsample < 0) {
      throw new IllegalArgumentException("--joint-subsample must be >= 0, got " + jointSubsample);
    }
    int joint = jointSubsample != null ? jointSubsample : TrainedPhysicsCalibration.defaultJointSubsample(subsample);
    if (!(budget > 0) || !Double.isFinite(budget)) {
      throw new IllegalArgumentException("--budget must be a positive number, got " + budget);
    }
    if (cvBudget != null && (!(cvBudget > 0) || !Double.isFinite(cvBudget))) {
      throw new IllegalArgumentException("--cv-budget must be a positive number, got " + cvBudget);
    }
    List<String> folds = switch (crossValidate.toLowerCase(Locale.ROOT)) {
      case "none" -> List.of();
      case "model" -> List.of("model");
      case "workload" -> List.of("workload");
      case "both" -> List.of("model", "workload");
      default -> throw new IllegalArgumentException(
          "--cross-validate: expected none, model, workload or both, got '" + crossValidate + "'");
    };
    if (!cvOnly) {
      Cli.requireWritable("--out", out);
    }
    if (report != null) {
      Cli.requireWritable("--report", report);
    }
    if (cvOut != null) {
      Cli.requireWritable("--cv-out", Path.of(cvOut + "-model.json"));
    }
    List<Experiment> all = run.experiments(spec.commandLine().getErr());
    List<Experiment> fitSet = includeSaturated ? all : all.stream().filter(e -> !e.saturated()).toList();
    if (fitSet.isEmpty()) {
      throw new IllegalArgumentException(run.files() + ": no non-saturated experiment to fit (use --include-saturated)");
    }
    Coefficients startCoefficients = start == null
        ? TrainedPhysicsCoefficients.bundled() : ValidateCommand.loadCoefficients(start);
    ParameterSpace space = TrainedPhysicsCalibration.space(startCoefficients);
    if (cvOnly && folds.isEmpty()) {
      throw new IllegalArgumentException("--cv-only needs --cross-validate model, workload or both");
    }
    List<CalibrationStage> stages = TrainedPhysicsCalibration.stages(subsample, joint, budget);
    List<CalibrationStage> cvStages = cvBudget == null ? stages
        : TrainedPhysicsCalibration.stages(subsample, joint, cvBudget);
    int n = run.threads();
    PrintStream progress = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.err), true,
        StandardCharsets.UTF_8);
    var out1 = spec.commandLine().getOut();
    EngineRunSimulator sim = new EngineRunSimulator(m, TrainedPhysicsCoefficients.LATENCY_MODEL, run.seed);
    try (Calibrator cal = new Calibrator(sim, space, new Calibrator.Settings(run.seed, n, 0, sigma), progress)) {
      List<Calibrator.Tie> fixed = new ArrayList<>();
      double[] startValues = TrainedPhysicsCoefficients.toArray(startCoefficients);
      for (String name : fix) {
        int i = space.names().indexOf(name);
        if (i < 0) {
          throw new IllegalArgumentException("--fix: unknown coefficient '" + name + "'; expected one of "
              + space.names());
        }
        fixed.add(new Calibrator.Tie(name, null, startValues[i]));
      }
      for (String pair : tie) {
        int eq = pair.indexOf('=');
        String name = eq < 0 ? pair : pair.substring(0, eq).trim();
        String other = eq < 0 ? "" : pair.substring(eq + 1).trim();
        if (eq < 0 || !space.names().contains(name) || !space.names().contains(other) || name.equals(other)
            || fix.contains(name)) {
          throw new IllegalArgumentException("--tie: expected NAME=OTHER with two different coefficients, NAME not"
              + " also in --fix, got '" + pair + "'; coefficients: " + space.names());
        }
        fixed.add(new Calibrator.Tie(name, other, 0));
      }
      cal.onUnexercised(training -> {
        List<Calibrator.Tie> ties = new ArrayList<>(fixed);
        ties.addAll(TrainedPhysicsCalibration.unexercised(training));
        return ties;
      });
      CoefficientWriter writer = CoefficientWriter.yaml(TrainedPhysicsCoefficients.LATENCY_MODEL);
      cal.onStageDone(cvOnly ? (stage, values) -> {} : (stage, values) -> {
        try {
          writer.write(space.coefficients(values), out, List.of("Checkpoint after calibration stage " + stage
              + " (the calibration was not finished when this was written)"));
        } catch (IOException e) {
          throw new UncheckedIOException("cannot write " + out + ": " + e.getMessage(), e);
        }
      });
      if (!cvOnly) {
        Calibrator.Result r = cal.fit(fitSet, stages);
        List<String> provenance = new ArrayList<>(List.of(
            "Fitted by: " + commandLine(budget),
            String.format(Locale.ROOT, "Experiments fitted: %d; evaluations: %d; final loss %.3f", fitSet.size(),
                r.evaluations(), r.loss())));
        try {
          writer.write(r.coefficients(), out, provenance);
        } catch (IOException e) {
          throw new UncheckedIOException("cannot write " + out + ": " + e.getMessage(), e);
        }
        ValidationReport fitted = new ValidationReport(cal.evaluate(all, r.coefficients(), 0), run.mode, out.toString());
        out1.println("Fitted coefficients written to " + out);
        out1.print(fitted.table());
        if (report != null) {
          ValidateCommand.write(report, fitted.toJson());
        }
      }
      cal.onStageDone((stage, values) -> {}); // the folds' checkpoints must not overwrite --out
      for (String kind : folds) {
        Function<Experiment, String> groupOf = kind.equals("model") ? Experiment::model : Experiment::workloadName;
        List<ExperimentComparison> heldOut = new ArrayList<>();
        List<Calibrator.Fold> done = cal.crossValidate(fitSet, groupOf, cvStages,
            f -> writeFold(writer, space, kind, f), group -> earlierFold(kind, group));
        List<Ensemble.Member> members = new ArrayList<>();
        for (Calibrator.Fold f : done) {
          heldOut.addAll(f.comparisons());
          members.add(new Ensemble.Member(f.heldOut(), space.coefficients(f.values())));
        }
        out1.println();
        out1.println("Held-out errors, leave one " + kind + " out:");
        ValidationReport cv;
        if (kind.equals("model") && members.size() >= 2) {
          // every fold's coefficients on every run: the spread behind the intervals, and their coverage
          EnsembleRuns runs = EnsembleRuns.simulate(cal.runs(), fitSet, members);
          Ensemble ensemble = runs.toEnsemble(TrainedPhysicsCoefficients.LATENCY_MODEL,
              cvOut == null ? "leave-one-model-out refits" : cvOut + "-model-ensemble.yaml");
          // the held-out comparisons in the order of the runs the members were simulated on
          Map<String, ExperimentComparison> byId = new HashMap<>();
          heldOut.forEach(c -> byId.put(c.id(), c));
          List<ExperimentComparison> point = fitSet.stream().map(e -> byId.get(e.id())).toList();
          cv = new ValidationReport(point, run.mode, "leave-one-model-out refits",
              ValidationReport.Intervals.of(point, fitSet, ensemble, runs, PredictionInterval.DEFAULT_LEVEL));
          out1.print(cv.table());
          out1.println(spread(members, space));
          if (cvOut != null) {
            Path file = Path.of(cvOut + "-model-ensemble.yaml");
            ValidateCommand.write(file, ensemble.toYaml(List.of(
                "Leave-one-model-out refits of: " + commandLine(cvBudget == null ? budget : cvBudget),
                "residual_log_sd: held-out log error beyond the members' spread, over " + fitSet.size() + " runs")));
            out1.println("Interval ensemble written to " + file);
          }
        } else {
          cv = new ValidationReport(heldOut, run.mode, "leave-one-" + kind + "-out refits");
          out1.print(cv.table());
        }
        if (cvOut != null) {
          ValidateCommand.write(Path.of(cvOut + "-" + kind + ".json"), cv.toJson());
        }
      }
    }
    return 0;
  }

  /** The calibration's command line as recorded in the files it writes, with the budget the fit used. */
  private String commandLine(double fitBudget) {
    return "blis calibrate --experiments " + run.files() + " --mode " + run.mode + " --subsample " + subsample
        + (jointSubsample == null ? "" : " --joint-subsample " + jointSubsample)
        + " --budget " + fitBudget + " --sigma " + sigma + " --seed " + run.seed
        + (includeSaturated ? " --include-saturated" : "")
        + (run.only == null ? "" : " --only '" + run.only + "'")
        + (run.exclude == null ? "" : " --exclude '" + run.exclude + "'")
        + (start == null ? "" : " --start '" + start + "'")
        + (fix.isEmpty() ? "" : " --fix " + String.join(",", fix))
        + (tie.isEmpty() ? "" : " --tie " + String.join(",", tie));
  }

  /** A fold's coefficient file from an earlier run, when resuming; null otherwise. */
  private double[] earlierFold(String kind, String group) {
    if (!resume || cvOut == null) {
      return null;
    }
    Path file = foldFile(cvOut, kind, group);
    return Files.isRegularFile(file) ? TrainedPhysicsCoefficients.toArray(CoefficientFiles.load(file)) : null;
  }

  /**
   * Each coefficient across the folds: min, median, max and the relative spread (max - min) / median;
   * a coefficient that moves a lot between folds leans on which models are in the fit.
   */
  static String spread(List<Ensemble.Member> members, ParameterSpace space) {
    StringBuilder sb = new StringBuilder(String.format(Locale.ROOT,
        "%nCoefficients across the %d folds: min / median / max (spread = (max - min) / median)%n", members.size()));
    List<double[]> values = members.stream().map(m -> TrainedPhysicsCoefficients.toArray(m.coefficients())).toList();
    for (int i = 0; i < space.names().size(); i++) {
      final int k = i;
      double[] v = values.stream().mapToDouble(x -> x[k]).sorted().toArray();
      double med = v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
      sb.append(String.format(Locale.ROOT, "  %-22s %12.5g %12.5g %12.5g  %s%n", space.names().get(i), v[0], med,
          v[v.length - 1], med == 0 ? (v[v.length - 1] == 0 ? "0%" : "n/a") : String.format(Locale.ROOT, "%.0f%%",
              100 * (v[v.length - 1] - v[0]) / Math.abs(med))));
    }
    return sb.toString();
  }

  /** The file a fold's coefficients go to: PREFIX-KIND-fold-GROUP.yaml, GROUP reduced to a file-name slug. */
  static Path foldFile(String prefix, String kind, String group) {
    String slug = group.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9.]+", "-").replaceAll("^-|-$", "");
    return Path.of(prefix + "-" + kind + "-fold-" + slug + ".yaml");
  }

  private void writeFold(CoefficientWriter writer, ParameterSpace space, String kind, Calibrator.Fold f) {
    if (cvOut == null) {
      return;
    }
    Path file = foldFile(cvOut, kind, f.heldOut());
    try {
      writer.write(space.coefficients(f.values()), file, List.of(
          "Leave-one-" + kind + "-out fold: fitted without " + f.heldOut(),
          "held_out: " + f.heldOut()));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
    }
  }
}
