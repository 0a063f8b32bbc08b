package io.blis.cli;

import io.blis.api.Coefficients;
import io.blis.cli.report.ValidationCharts;
import io.blis.engine.validate.EngineRunSimulator;
import io.blis.engine.validate.Ensemble;
import io.blis.engine.validate.EnsembleRuns;
import io.blis.engine.validate.ExperimentComparison;
import io.blis.engine.validate.Experiment;
import io.blis.engine.validate.ParallelRuns;
import io.blis.engine.validate.ValidationReport;
import io.blis.latency.coeff.CoefficientFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code blis validate}: simulates every experiment of an experiments file and compares the
 * predicted latencies with the measured ones (table on stdout, JSON and HTML files).
 */
@Command(
    name = "validate",
    mixinStandardHelpOptions = true,
    description = "Simulates the experiments of an experiments.json-style file and compares with the measurements.")
public final class ValidateCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin ExperimentOptions run = new ExperimentOptions();

  @Option(names = "--out", paramLabel = "FILE", description = "Write the JSON results here.")
  Path out;

  @Option(names = "--html", paramLabel = "FILE",
      description = "Write the HTML report here (default: --out with .html, if --out is given).")
  Path html;

  @Option(names = "--coefficients", paramLabel = "FILE|INLINE",
      description = "Coefficient file or inline list 'alpha=..;beta=..' (default: the latency model's bundled ones).")
  String coefficients;

  @Option(names = "--latency-model", defaultValue = "trained-physics", description = "Latency model (default: ${DEFAULT-VALUE}).")
  String latencyModel;

  @Option(names = "--max-requests-per-stage", defaultValue = "0", paramLabel = "N",
      description = "Simulate only the first N requests of each stage, compared with the trace's first N (0 = all).")
  int maxRequestsPerStage;

  @Mixin IntervalOptions intervalOptions = new IntervalOptions();

  @Override
  public Integer call() {
    EngineRunSimulator.Mode m = run.mode();
    if (maxRequestsPerStage < 0) {
      throw new IllegalArgumentException("--max-requests-per-stage must be >= 0, got " + maxRequestsPerStage);
    }
    Path htmlPath = html;
    if (out != null) {
      Cli.requireWritable("--out", out);
      // the report goes beside a file, never beside a device, a FIFO or standard output
      if (htmlPath == null && !io.blis.engine.result.OutputFiles.inPlace(out)) {
        String name = out.getFileName().toString();
        htmlPath = out.resolveSibling((name.endsWith(".json") ? name.substring(0, name.length() - 5) : name) + ".html");
      }
    }
    if (htmlPath != null) {
      Cli.requireWritable(html != null ? "--html" : "--out", htmlPath);
    }
    Ensemble ensemble = intervalOptions.resolve(latencyModel);
    List<Experiment> exps = run.experiments(spec.commandLine().getErr());
    Coefficients c = loadCoefficients(coefficients);
    int n = run.threads();
    ValidationReport report;
    try (ParallelRuns runs = new ParallelRuns(new EngineRunSimulator(m, latencyModel, run.seed), n)) {
      List<ExperimentComparison> point = runs.compare(exps, c, maxRequestsPerStage);
      ValidationReport.Intervals iv = ensemble == null ? null : ValidationReport.Intervals.of(point, exps, ensemble,
          EnsembleRuns.simulate(runs, exps, ensemble.members(), maxRequestsPerStage), intervalOptions.level);
      report = new ValidationReport(point, run.mode,
          coefficients == null ? "bundled " + latencyModel + " defaults" : coefficients, iv);
    }
    spec.commandLine().getOut().print(report.table());
    if (out != null) {
      write(out, report.toJson());
    }
    if (htmlPath != null) {
      write(htmlPath, ValidationCharts.html(report));
    }
    return 0;
  }

  /** A coefficient file path or an inline list; null gives the bundled defaults. */
  static Coefficients loadCoefficients(String arg) {
    if (arg == null) {
      return Coefficients.empty();
    }
    if (arg.contains("=")) {
      return CoefficientFiles.parseInline(arg);
    }
    Path p = Path.of(arg);
    if (!Files.isRegularFile(p)) {
      throw new IllegalArgumentException("--coefficients: no such file " + p);
    }
    return CoefficientFiles.load(p);
  }

  /** Writes {@code text} to {@code file} atomically ({@link io.blis.engine.result.OutputFiles}). */
  static void write(Path file, String text) {
    try {
      io.blis.engine.result.OutputFiles.write(file, text);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
    }
  }
}
