package io.blis.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.blis.engine.validate.Ensemble;
import io.blis.engine.validate.Extrapolation;
import io.blis.engine.validate.IntervalScales;
import io.blis.engine.validate.Metric;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code blis interval-scales}: estimates the scales of the prediction intervals from validation
 * results of runs that no fit saw ({@link IntervalScales}) and writes an ensemble file with them.
 */
@Command(
    name = "interval-scales",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = "Estimate the prediction intervals' residual and extrapolation scales from validation JSON of"
        + " runs no fit saw (validate --intervals --out, or a cross-validation's held-out JSON); write the"
        + " ensemble with them.")
final class IntervalScalesCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(names = "--runs", required = true, paramLabel = "JSON",
      description = "Validation JSON whose experiments no fit saw (repeatable).")
  List<Path> runs;

  @Option(names = "--only", paramLabel = "REGEX", description = "Only experiments whose id matches (find).")
  String only;

  @Option(names = "--exclude", paramLabel = "REGEX", description = "Leave out experiments whose id matches (find).")
  String exclude;

  @Option(names = "--ensemble", paramLabel = "FILE",
      description = "Ensemble whose members and fit domain are kept (default: the bundled one).")
  Path ensemble;

  @Option(names = "--out", paramLabel = "FILE", description = "Write the ensemble with the new scales here.")
  Path out;

  @Option(names = "--leave-out", defaultValue = "run", paramLabel = "run|source",
      description = "What the left-out coverage leaves out: each run alone, or every point of a corpus source"
          + " (ids source/point) together (default: ${DEFAULT-VALUE}).")
  String leaveOut;

  @Option(names = "--keep", paramLabel = "ENSEMBLE",
      description = "Keep the residual and the extrapolation scales of this ensemble file as they are and estimate"
          + " only the kinds it has none for (for new axes estimated from other runs).")
  Path keep;

  @Option(names = "--interval-level", defaultValue = "0.9", paramLabel = "P",
      description = "Nominal coverage the coverage is measured at (default: ${DEFAULT-VALUE}).")
  double level;

  @Override
  public Integer call() {
    if (out != null) {
      Cli.requireWritable("--out", out);
    }
    Ensemble base = ensemble == null ? Ensemble.bundled() : Ensemble.load(ensemble);
    List<IntervalScales.Run> all = new ArrayList<>();
    Set<String> ids = new LinkedHashSet<>();
    for (Path f : runs) {
      for (IntervalScales.Run r : read(f)) {
        if ((only == null || Pattern.compile(only).matcher(r.id()).find())
            && (exclude == null || !Pattern.compile(exclude).matcher(r.id()).find())) {
          if (!ids.add(r.id())) {
            throw new IllegalArgumentException(f + ": experiment '" + r.id() + "' appears twice in --runs");
          }
          all.add(r);
        }
      }
    }
    if (!leaveOut.equals("run") && !leaveOut.equals("source")) {
      throw new IllegalArgumentException("--leave-out must be run or source, got '" + leaveOut + "'");
    }
    Map<Metric, IntervalScales.Scales> kept = keep == null ? Map.of()
        : IntervalScales.scalesOf(Ensemble.load(Cli.requireFile("--keep", keep)));
    IntervalScales.Result result = IntervalScales.estimate(all, Ensemble.METRICS, level,
        leaveOut.equals("source") ? IntervalScales::sourceOf : IntervalScales.Run::id, kept);
    print(spec.commandLine().getOut(), result, all.size());
    if (out != null) {
      Ensemble updated = IntervalScales.apply(base, result);
      List<String> header = new ArrayList<>();
      header.add("Interval scales estimated by blis interval-scales from " + all.size() + " runs no fit saw: "
          + runs.stream().map(Path::toString).toList() + (only == null ? "" : " --only " + only)
          + (exclude == null ? "" : " --exclude " + exclude));
      header.add("members: " + base.source());
      if (keep != null) {
        header.add("residual and the scales of " + keep + " kept as they are; the other kinds estimated given them");
      }
      ValidateCommand.write(out, updated.toYaml(header));
    }
    return 0;
  }

  /** The runs of one validation JSON; errors name the file and the experiment. */
  static List<IntervalScales.Run> read(Path f) {
    JsonNode root = io.blis.latency.coeff.InputTrees.json(
        io.blis.latency.coeff.InputTrees.readText(Cli.requireFile("--runs", f), "validation JSON"), "--runs " + f);
    JsonNode exps = root == null ? null : root.get("experiments");
    if (exps == null || !exps.isArray()) {
      throw new IllegalArgumentException("--runs " + f + ": expected validation JSON with an 'experiments' array");
    }
    List<IntervalScales.Run> out = new ArrayList<>();
    for (JsonNode e : exps) {
      String id = e.path("id").asText();
      String where = "--runs " + f + ": experiment '" + id + "'";
      JsonNode iv = e.get("interval");
      if (iv == null || !iv.isObject()) {
        throw new IllegalArgumentException(where + " has no interval (validate with --intervals)");
      }
      Map<Metric, Double> logError = new LinkedHashMap<>();
      Map<Metric, Double> spread = new LinkedHashMap<>();
      Set<Extrapolation.Kind> kinds = EnumSet.noneOf(Extrapolation.Kind.class);
      for (Metric m : Ensemble.METRICS) {
        double obs = e.path("observed").path(m.key()).asDouble(Double.NaN);
        double pred = e.path("predicted").path(m.key()).asDouble(Double.NaN);
        logError.put(m, obs > 0 && pred > 0 ? Math.log(obs / pred) : Double.NaN);
        JsonNode mi = iv.path(m.key());
        spread.put(m, mi.path("member_log_sd").asDouble(0));
        for (JsonNode k : mi.path("extrapolation_kinds")) {
          try {
            kinds.add(Extrapolation.Kind.parse(k.asText()));
          } catch (IllegalArgumentException bad) {
            throw new IllegalArgumentException(where + ": " + bad.getMessage(), bad);
          }
        }
      }
      out.add(new IntervalScales.Run(id, kinds, logError, spread));
    }
    return out;
  }

  private void print(PrintWriter w, IntervalScales.Result r, int n) {
    double z = io.blis.engine.validate.PredictionInterval.z(level);
    w.printf(Locale.ROOT, "%d runs no fit saw; %.0f%% intervals%n", n, 100 * level);
    w.println("scale                    runs   log sd E2E  log sd TTFT   E2E interval (no member spread)");
    IntervalScales.Scales e2e = r.scales().get(Metric.E2E_MEAN);
    IntervalScales.Scales ttft = r.scales().get(Metric.TTFT_MEAN);
    w.printf(Locale.ROOT, "%-24s %4d %12.4f %12.4f   x/÷ %.3f%n", "inside the family",
        r.inSample().get(Metric.E2E_MEAN).getOrDefault("in family", new IntervalScales.Coverage(0, 0)).runs(),
        e2e.residualLogSd(), ttft.residualLogSd(), Math.exp(z * e2e.residualLogSd()));
    for (Extrapolation.Kind k : Extrapolation.Kind.values()) {
      if (e2e.kindLogSd().containsKey(k)) {
        w.printf(Locale.ROOT, "%-24s %4d %12.4f %12s   x/÷ %.3f (with the residual)%n", k.key(),
            r.runsPerKind().getOrDefault(k, 0), e2e.kindLogSd().get(k), ttft.kindLogSd().containsKey(k)
                ? String.format(Locale.ROOT, "%.4f", ttft.kindLogSd().get(k)) : "(no run)",
            Math.exp(z * e2e.logSd(Set.of(k))));
      }
    }
    w.println("coverage by group        E2E in sample  E2E left out  TTFT in sample  TTFT left out");
    for (String g : r.inSample().get(Metric.E2E_MEAN).keySet()) {
      w.printf(Locale.ROOT, "%-24s %13s %13s %15s %14s%n", g, cov(r.inSample(), Metric.E2E_MEAN, g),
          cov(r.leaveOneOut(), Metric.E2E_MEAN, g), cov(r.inSample(), Metric.TTFT_MEAN, g),
          cov(r.leaveOneOut(), Metric.TTFT_MEAN, g));
    }
    w.flush();
  }

  private static String cov(Map<Metric, Map<String, IntervalScales.Coverage>> c, Metric m, String g) {
    IntervalScales.Coverage x = c.get(m).get(g);
    return x == null ? "-" : x.inside() + "/" + x.runs();
  }
}
