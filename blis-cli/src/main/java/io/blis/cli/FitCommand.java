package io.blis.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import io.blis.api.HardwareSpec;
import io.blis.api.ModelSpec;
import io.blis.engine.cluster.Cluster;
import io.blis.engine.validate.EngineRunSimulator;
import io.blis.engine.validate.Experiment;
import io.blis.engine.validate.ExperimentsFile;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.latency.coeff.CoefficientFiles;
import io.blis.latency.fit.TraceFit;
import io.blis.latency.physics.StepFit;
import io.blis.latency.physics.TrainedPhysicsCoefficients;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code blis fit}: learns trained-physics coefficients from vLLM OpenTelemetry traces of one
 * deployment and writes a coefficient file that {@code --coefficients} loads, plus a fit report.
 */
@Command(
    name = "fit",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = "Learn trained-physics coefficients from vLLM journey and step traces (OTLP JSON).")
final class FitCommand implements Callable<Integer> {

  private static final int[][] SIZE_BUCKETS = {{1, 1}, {2, 8}, {9, 32}, {33, 128}, {129, Integer.MAX_VALUE}};

  @Spec CommandSpec spec;

  @Option(names = "--traces", required = true, paramLabel = "PATH",
      description = "OTLP JSON traces: a file (gzip allowed) or a directory of them.")
  Path traces;

  @Option(names = "--model", paramLabel = "NAME|CONFIG_JSON", description = "Model of the traced server (default: ${DEFAULT-VALUE}).")
  String model = DeploymentOptions.DEFAULT_MODEL;

  @Option(names = {"--gpu", "--hardware"}, paramLabel = "NAME|JSON", description = "GPU of the traced server (default: ${DEFAULT-VALUE}).")
  String gpu = DeploymentOptions.DEFAULT_GPU;

  @Option(names = "--tp", description = "Tensor-parallel degree of the traced server (default: ${DEFAULT-VALUE}).")
  int tp = 1;

  @Option(names = "--experiments", paramLabel = "FILE",
      description = "Take the traced server's model, GPU and TP from an experiments file (as 'blis observe' writes it) instead of --model, --gpu and --tp.")
  Path experiments;

  @Option(names = "--experiment", paramLabel = "ID",
      description = "With --experiments: the entry to use (default: the only one).")
  String experimentId;

  @Option(names = "--coefficients", paramLabel = "FILE|INLINE",
      description = "Starting coefficients; what the traces do not determine is kept (default: the bundled ones).")
  String coefficients;

  @Option(names = "--out", required = true, paramLabel = "FILE", description = "Coefficient file to write (YAML).")
  Path out;

  @Option(names = "--report", paramLabel = "FILE", description = "Also write the fit report (JSON).")
  Path report;

  @Override
  public Integer call() {
    DeploymentOptions.require(spec.commandLine(), tp >= 1, "--tp must be at least 1, got " + tp);
    if (!Files.exists(traces)) {
      throw new IllegalArgumentException("--traces: no such file or directory '" + traces + "'");
    }
    Cli.requireWritable("--out", out);
    if (report != null) {
      Cli.requireWritable("--report", report);
    }
    ModelSpec m;
    HardwareSpec g;
    if (experiments != null) {
      var pr = spec.commandLine().getParseResult();
      DeploymentOptions.require(spec.commandLine(), !pr.hasMatchedOption("--model")
          && !pr.hasMatchedOption("--gpu") && !pr.hasMatchedOption("--tp"),
          "--experiments gives the model, GPU and TP: leave out --model, --gpu and --tp");
      Experiment e = experiment();
      m = EngineRunSimulator.loadModel(e);
      g = EngineRunSimulator.gpu(e);
      tp = e.tp();
    } else {
      DeploymentOptions.require(spec.commandLine(), experimentId == null, "--experiment needs --experiments");
      m = model.endsWith(".json") ? ModelCatalog.fromFile(Path.of(model)) : ModelCatalog.byName(model);
      g = gpu.endsWith(".json") ? GpuCatalog.fromFile(Path.of(gpu)) : GpuCatalog.resolve(gpu);
    }
    TraceFit.Outcome o = TraceFit.fit(traces, m, g, tp, Cluster.loadCoefficients(coefficients));
    String yaml = provenance(o) + CoefficientFiles.toYaml(TrainedPhysicsCoefficients.LATENCY_MODEL,
        String.format(Locale.ROOT, "blis fit of %s on %s TP%d from %s: %d steps, test MAPE %.2f%%",
            m.name(), g.name(), tp, traces.getFileName(), o.stepsWithBatch(), o.beta().testMapePct()),
        o.coefficients());
    Cli.write("--out", out, yaml);
    String json = report(o);
    if (report != null) {
      Cli.write("--report", report, json);
    }
    StepFit.Result b = o.beta();
    spec.commandLine().getOut().printf(Locale.ROOT,
        "fitted %d traced steps (%d with request snapshots, %d rebuilt from journeys; %d left out),"
            + " %d journeys: step time test MAPE %.2f%%, Pearson r %.4f (train %d, test %d steps)%n",
        o.stepsWithBatch(), o.stepsFromSnapshots(), o.stepsFromJourneys(), o.stepsWithoutBatch(),
        o.alpha().requests(), b.testMapePct(), b.testPearson(), b.trainSteps(), b.testSteps());
    if (o.stepsWithoutBatch() > 0) {
      StringBuilder why = new StringBuilder();
      for (Map.Entry<String, Long> e : o.stepsLeftOut().entrySet()) {
        why.append(String.format(Locale.ROOT, "%n  %d %s: %s", e.getValue(), e.getKey(),
            TraceFit.describe(e.getKey())));
      }
      boolean onlyBatch = !o.stepsLeftOut().containsKey(TraceFit.NON_POSITIVE_DURATION);
      spec.commandLine().getErr().printf(Locale.ROOT,
          "warning: %d of %d traced steps left out%s:%s%n", o.stepsWithoutBatch(),
          o.stepsWithBatch() + o.stepsWithoutBatch(), onlyBatch ? ", their batch unknown" : "", why);
      spec.commandLine().getErr().flush();
    }
    for (Map.Entry<String, Long> w : o.warnings().entrySet()) {
      if (w.getKey().startsWith("step summary")) { // a step the trace describes but the fit could not use
        spec.commandLine().getErr().printf(Locale.ROOT, "warning: %d %s, skipped (first at %s)%n", w.getValue(),
            w.getKey(), o.firstSeen().get(w.getKey()));
      }
    }
    spec.commandLine().getErr().flush();
    List<TrainedPhysicsCoefficients.Term> terms = TrainedPhysicsCoefficients.terms();
    double[] values = TrainedPhysicsCoefficients.toArray(o.coefficients());
    for (int k = 0; k < terms.size(); k++) {
      spec.commandLine().getOut().printf(Locale.ROOT, "  %-22s %12.4f %s%n", terms.get(k).name(),
          values[k], fitted(o, k) ? "fitted" : "kept: " + o.notIdentified(k));
    }
    spec.commandLine().getOut().flush();
    return 0;
  }

  /** The entry of --experiments named by --experiment, or its only entry. */
  private Experiment experiment() {
    List<Experiment> all = ExperimentsFile.read(Cli.requireFile("--experiments", experiments));
    if (experimentId == null) {
      if (all.size() != 1) {
        throw new IllegalArgumentException("--experiments " + experiments + " has " + all.size()
            + " entries: name one with --experiment (" + String.join(", ", all.stream().map(Experiment::id).toList()) + ")");
      }
      return all.get(0);
    }
    return all.stream().filter(x -> x.id().equals(experimentId)).findFirst()
        .orElseThrow(() -> new IllegalArgumentException("--experiment: no entry '" + experimentId + "' in "
            + experiments + " (entries: " + String.join(", ", all.stream().map(Experiment::id).toList()) + ")"));
  }

  /** Whether coefficient {@code k} (in {@link TrainedPhysicsCoefficients#terms()} order) was fitted. */
  private static boolean fitted(TraceFit.Outcome o, int k) {
    return o.notIdentified(k) == null;
  }

  /**
   * YAML comment lines naming the coefficients the trace determined and, for each other one, that
   * it is the starting value and why the trace does not determine it.
   */
  private static String provenance(TraceFit.Outcome o) {
    List<TrainedPhysicsCoefficients.Term> terms = TrainedPhysicsCoefficients.terms();
    StringBuilder fittedNames = new StringBuilder();
    StringBuilder kept = new StringBuilder();
    for (int k = 0; k < terms.size(); k++) {
      if (fitted(o, k)) {
        fittedNames.append(fittedNames.length() == 0 ? "" : ", ").append(terms.get(k).name());
      } else {
        kept.append("#   ").append(terms.get(k).name()).append(": ")
            .append(o.notIdentified(k).replace('\n', ' ')).append('\n');
      }
    }
    return "# fitted from the trace: " + (fittedNames.length() == 0 ? "none" : fittedNames) + "\n"
        + (kept.length() == 0 ? "" : "# kept at their starting values (not determined by this trace):\n" + kept);
  }

  private String report(TraceFit.Outcome o) {
    StringWriter w = new StringWriter();
    StepFit.Result b = o.beta();
    try (JsonGenerator g = new JsonFactory().createGenerator(w)) {
      g.setPrettyPrinter(new DefaultPrettyPrinter());
      g.writeStartObject();
      g.writeNumberField("steps_with_batch", o.stepsWithBatch());
      g.writeNumberField("steps_from_snapshots", o.stepsFromSnapshots());
      g.writeNumberField("steps_from_journeys", o.stepsFromJourneys());
      g.writeNumberField("steps_without_batch", o.stepsWithoutBatch());
      g.writeObjectFieldStart("steps_left_out");
      for (Map.Entry<String, Long> e : o.stepsLeftOut().entrySet()) {
        g.writeNumberField(e.getKey(), e.getValue());
      }
      g.writeEndObject();
      g.writeNumberField("train_steps", b.trainSteps());
      g.writeNumberField("test_steps", b.testSteps());
      g.writeNumberField("validation_mape_pct", b.validationMapePct());
      g.writeNumberField("test_mape_pct", b.testMapePct());
      g.writeNumberField("test_pearson_r", b.testPearson());
      double[] sortedAbs = java.util.Arrays.stream(b.testResiduals()).map(Math::abs).sorted().toArray();
      g.writeObjectFieldStart("test_abs_error_pct");
      for (int q : new int[] {50, 90, 99}) {
        g.writeNumberField("p" + q, 100 * sortedAbs[(int) Math.min(sortedAbs.length - 1, Math.floor(q / 100.0 * sortedAbs.length))]);
      }
      g.writeNumberField("max", 100 * sortedAbs[sortedAbs.length - 1]);
      g.writeEndObject();
      g.writeNumberField("journeys", o.alpha().requests());
      g.writeArrayFieldStart("coefficients");
      List<TrainedPhysicsCoefficients.Term> terms = TrainedPhysicsCoefficients.terms();
      double[] values = TrainedPhysicsCoefficients.toArray(o.coefficients());
      for (int k = 0; k < terms.size(); k++) {
        g.writeStartObject();
        g.writeStringField("name", terms.get(k).name());
        g.writeNumberField("value", values[k]);
        g.writeBooleanField("fitted", fitted(o, k));
        if (!fitted(o, k)) {
          g.writeStringField("not_identified", o.notIdentified(k));
        }
        if (k < TrainedPhysicsCoefficients.BETA_LENGTH && b.exercised()[k]) {
          g.writeNumberField("standard_error", b.standardErrors()[k]);
        }
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeArrayFieldStart("test_residuals_by_batch");
      for (boolean prefill : new boolean[] {false, true}) {
        for (int[] bucket : SIZE_BUCKETS) {
          int n = 0;
          double abs = 0;
          double sum = 0;
          for (int i = 0; i < b.testResiduals().length; i++) {
            int size = b.testBatchSizes()[i];
            if (b.testWithPrefill()[i] == prefill && size >= bucket[0] && size <= bucket[1]) {
              n++;
              abs += Math.abs(b.testResiduals()[i]);
              sum += b.testResiduals()[i];
            }
          }
          if (n == 0) {
            continue;
          }
          g.writeStartObject();
          g.writeStringField("phase", prefill ? "with_prefill" : "decode_only");
          g.writeStringField("batch_size", bucket[1] == Integer.MAX_VALUE ? bucket[0] + "+"
              : bucket[0] == bucket[1] ? Integer.toString(bucket[0]) : bucket[0] + "-" + bucket[1]);
          g.writeNumberField("steps", n);
          g.writeNumberField("mape_pct", 100 * abs / n);
          g.writeNumberField("mean_residual_pct", 100 * sum / n);
          g.writeEndObject();
        }
      }
      g.writeEndArray();
      g.writeObjectFieldStart("import_warnings");
      for (Map.Entry<String, Long> e : o.warnings().entrySet()) {
        g.writeNumberField(e.getKey(), e.getValue());
      }
      g.writeEndObject();
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return w + "\n";
  }
}
