package io.blis.engine.cli;

import io.blis.api.Coefficients;
import io.blis.engine.validate.Calibrator;
import io.blis.engine.validate.CalibrationStage;
import io.blis.engine.validate.CoefficientWriter;
import io.blis.engine.validate.EngineRunSimulator;
import io.blis.engine.validate.Experiment;
import io.blis.engine.validate.ExperimentComparison;
import io.blis.engine.validate.ParameterSpace;
import io.blis.engine.validate.TrainedPhysicsCalibration;
import io.blis.engine.validate.ValidationReport;
import io.blis.latency.physics.TrainedPhysicsCoefficients;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.function.Function;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code blis calibrate}: fits the trained-physics coefficients to an experiments file by
 * simulation in the loop (staged CMA-ES + BOBYQA within physically plausible bounds), writes the
 * coefficient file, validates the fit on whole runs and optionally cross-validates it.
 */
@Command(
    name = "calibrate",
    mixinStandardHelpOptions = true,
    description = "Fits trained-physics coefficients to measured runs by simulation in the loop.")
public final class CalibrateCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin ExperimentOptions run = new ExperimentOptions();

  @Option(names = "--out", defaultValue = "calibrated-coefficients.yaml", paramLabel = "FILE",
      description = "Coefficient file to write (default: ${DEFAULT-VALUE}).")
  Path out;

  @Option(names = "--report", paramLabel = "FILE",
      description = "Write the validation JSON of the fitted coefficients (all experiments, whole runs) here.")
  Path report;

  @Option(names = "--start", paramLabel = "FILE|INLINE",
      description = "Coefficients to start from (default: the bundled trained-physics ones).")
  String start;

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
      description = "Write held-out validation JSON to PREFIX-model.json / PREFIX-workload.json.")
  String cvOut;

  @Override
  public Integer call() {
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
    List<String> folds = switch (crossValidate.toLowerCase(Locale.ROOT)) {
      case "none" -> List.of();
      case "model" -> List.of("model");
      case "workload" -> List.of("workload");
      case "both" -> List.of("model", "workload");
      default -> throw new IllegalArgumentException(
          "--cross-validate: expected none, model, workload or both, got '" + crossValidate + "'");
    };
    List<Experiment> all = run.experiments(spec.commandLine().getErr());
    List<Experiment> fitSet = includeSaturated ? all : all.stream().filter(e -> !e.saturated()).toList();
    if (fitSet.isEmpty()) {
      throw new IllegalArgumentException(run.files() + ": no non-saturated experiment to fit (use --include-saturated)");
    }
    Coefficients startCoefficients = start == null
        ? TrainedPhysicsCoefficients.bundled() : ValidateCommand.loadCoefficients(start);
    ParameterSpace space = TrainedPhysicsCalibration.space(startCoefficients);
    List<CalibrationStage> stages = TrainedPhysicsCalibration.stages(subsample, joint, budget);
    int n = run.threads();
    PrintStream progress = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.err), true,
        StandardCharsets.UTF_8);
    var out1 = spec.commandLine().getOut();
    EngineRunSimulator sim = new EngineRunSimulator(m, TrainedPhysicsCoefficients.LATENCY_MODEL, run.seed);
    try (Calibrator cal = new Calibrator(sim, space, new Calibrator.Settings(run.seed, n, 0, sigma), progress)) {
      cal.onUnexercised(TrainedPhysicsCalibration::unexercised);
      CoefficientWriter writer = CoefficientWriter.yaml(TrainedPhysicsCoefficients.LATENCY_MODEL);
      cal.onStageDone((stage, values) -> {
        try {
          writer.write(space.coefficients(values), out, List.of("Checkpoint after calibration stage " + stage
              + " (the calibration was not finished when this was written)"));
        } catch (IOException e) {
          throw new UncheckedIOException("cannot write " + out + ": " + e.getMessage(), e);
        }
      });
      Calibrator.Result r = cal.fit(fitSet, stages);
      List<String> provenance = new ArrayList<>(List.of(
          "Fitted by: blis calibrate --experiments " + run.files() + " --mode " + run.mode + " --subsample " + subsample
              + (jointSubsample == null ? "" : " --joint-subsample " + jointSubsample)
              + " --budget " + budget + " --sigma " + sigma + " --seed " + run.seed + (includeSaturated ? " --include-saturated" : "")
              + (run.only == null ? "" : " --only '" + run.only + "'")
              + (run.exclude == null ? "" : " --exclude '" + run.exclude + "'")
              + (start == null ? "" : " --start '" + start + "'"),
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
      for (String kind : folds) {
        Function<Experiment, String> groupOf = kind.equals("model") ? Experiment::model : Experiment::workloadName;
        List<ExperimentComparison> heldOut = new ArrayList<>();
        for (Calibrator.Fold f : cal.crossValidate(fitSet, groupOf, stages)) {
          heldOut.addAll(f.comparisons());
        }
        ValidationReport cv = new ValidationReport(heldOut, run.mode, "leave-one-" + kind + "-out refits");
        out1.println();
        out1.println("Held-out errors, leave one " + kind + " out:");
        out1.print(cv.table());
        if (cvOut != null) {
          ValidateCommand.write(Path.of(cvOut + "-" + kind + ".json"), cv.toJson());
        }
      }
    }
    return 0;
  }
}
