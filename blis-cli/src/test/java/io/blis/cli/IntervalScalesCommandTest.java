package io.blis.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.blis.engine.validate.Ensemble;
import io.blis.engine.validate.Extrapolation;
import io.blis.engine.validate.IntervalScales;
import io.blis.engine.validate.Metric;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code blis interval-scales} on the 53 runs no fit saw behind the bundled interval scales (README,
 * "Prediction intervals"): the scales, the coverage per group and the median half-widths the README
 * quotes. The inputs are the validation JSON of docs/validation.md's "Estimating the scales"
 * commands (the 17 held-out folds of docs/calibrated-cv-model.json and target/oos.json: 29 tier-C
 * runs, 4 FP8 Llama-4-Scout, 3 saturated tier-A), trimmed to the fields interval-scales reads by
 * scripts/trim_interval_runs.py.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class IntervalScalesCommandTest {

  /** The normal quantile of 0.95: a 90% interval is point x exp(+-1.645 s). */
  private static final double Z90 = 1.6448536269514722;

  private Path folds;
  private Path oos;
  private BlisCliTest.Outcome outcome;
  private Ensemble written;
  /** Coverage table of the output: group to [E2E in sample, E2E left out, TTFT in sample, TTFT left out]. */
  private final Map<String, int[][]> coverage = new LinkedHashMap<>();
  /** Scale table of the output: kind (or "inside the family") to the runs it counts. */
  private final Map<String, Integer> runsPerScale = new LinkedHashMap<>();

  @BeforeAll
  void estimate(@TempDir Path dir) throws Exception {
    folds = Path.of(getClass().getResource("/interval-scales/held-out-folds.json").toURI());
    oos = Path.of(getClass().getResource("/interval-scales/oos.json").toURI());
    Path out = dir.resolve("ensemble.yaml");
    outcome = BlisCliTest.blis("interval-scales", "--runs", folds.toString(), "--runs", oos.toString(),
        "--out", out.toString());
    assertThat(outcome.code()).as(outcome.err()).isZero();
    written = Ensemble.load(out);
    List<String> lines = outcome.out().lines().toList();
    assertThat(lines.get(0)).isEqualTo("53 runs no fit saw; 90% intervals");
    int table = lines.indexOf(lines.stream().filter(l -> l.startsWith("coverage by group")).findFirst().orElseThrow());
    for (String l : lines.subList(2, table)) {
      String name = l.startsWith("inside the family") ? "inside the family" : l.split("\\s+")[0];
      runsPerScale.put(name, Integer.parseInt(l.substring(name.length()).trim().split("\\s+")[0]));
    }
    for (String l : lines.subList(table + 1, lines.size())) {
      String[] t = l.trim().split("\\s+");
      String group = String.join(" ", Arrays.copyOf(t, t.length - 4));
      int[][] cells = new int[4][];
      for (int i = 0; i < 4; i++) {
        String[] c = t[t.length - 4 + i].split("/");
        cells[i] = new int[] {Integer.parseInt(c[0]), Integer.parseInt(c[1])};
      }
      coverage.put(group, cells);
    }
  }

  /** Inside / runs of the groups named, summed: [E2E in sample, E2E left out, TTFT in sample, TTFT left out]. */
  private String covered(String... groups) {
    int[][] sum = new int[4][2];
    for (String g : groups) {
      assertThat(coverage).containsKey(g);
      for (int i = 0; i < 4; i++) {
        sum[i][0] += coverage.get(g)[i][0];
        sum[i][1] += coverage.get(g)[i][1];
      }
    }
    List<String> cells = new ArrayList<>();
    for (int[] c : sum) {
      cells.add(c[0] + "/" + c[1]);
    }
    return String.join(" ", cells);
  }

  @Test
  void coverageOfAllRunsAndPerGroupIsTheReadmes() {
    // README: all 53 runs, mean E2E 50 (94%) in sample / 48 (91%) leaving each run out; TTFT 50 / 47
    assertThat(covered("all")).isEqualTo("50/53 48/53 50/53 47/53");
    // inside the family (17 held-out folds + 16 tier-C H100): 31 / 31, 32 / 32 of 33
    assertThat(covered("in family")).isEqualTo("31/33 31/33 32/33 32/33");
    // Qwen3-14B on H100: the family is the only distance, 4 / 4 everywhere
    assertThat(covered("family")).isEqualTo("4/4 4/4 4/4 4/4");
    // A100-80GB (gpu) and L40S (gpu_estimate), with and without Qwen3: 5 / 4 E2E, 4 / 3 TTFT of 5
    assertThat(covered("gpu", "gpu+family", "gpu_estimate", "gpu_estimate+family")).isEqualTo("5/5 4/5 4/5 3/5");
    // Mixtral-8x22B TP 8: 4 / 4 E2E, 4 / 3 TTFT
    assertThat(covered("tp")).isEqualTo("4/4 4/4 4/4 3/4");
    // Llama-4-Scout FP8: 3 / 3 both
    assertThat(covered("precision+experts+family")).isEqualTo("3/4 3/4 3/4 3/4");
    // saturated: 3 / 2 both
    assertThat(covered("saturated")).isEqualTo("3/3 2/3 3/3 2/3");
    // and those are all the groups there are
    assertThat(coverage.keySet()).containsExactlyInAnyOrder("in family", "family", "gpu", "gpu+family", "gpu_estimate",
        "gpu_estimate+family", "tp", "precision+experts+family", "saturated", "all");
    // the runs each scale rests on: "2 alone (A100) of 3", "1 alone (L40S) of 2", "4 alone (Qwen3-14B H100)"
    assertThat(runsPerScale).containsExactly(Map.entry("inside the family", 33), Map.entry("gpu", 3),
        Map.entry("gpu_estimate", 2), Map.entry("tp", 4), Map.entry("precision", 4), Map.entry("experts", 4),
        Map.entry("family", 10), Map.entry("saturated", 3));
    assertThat(coverage.get("gpu")[0][1]).isEqualTo(2);
    assertThat(coverage.get("gpu_estimate")[0][1]).isEqualTo(1);
    assertThat(coverage.get("family")[0][1]).isEqualTo(4);
  }

  private static String f3(double v) {
    return String.format(Locale.ROOT, "%.3f", v);
  }

  /** A kind's log sd as an interval uses it (a kind no run measured takes the largest there is). */
  private double scale(Extrapolation.Kind k, Metric m) {
    return written.extrapolationLogSd(List.of(new Extrapolation(k, "test")), m);
  }

  /** The README's last column: exp(1.645 sqrt(residual^2 + the kind's scale^2)), two decimals. */
  private String times(Extrapolation.Kind k) {
    double r = written.residual(Metric.E2E_MEAN);
    double s = k == null ? 0 : scale(k, Metric.E2E_MEAN);
    return String.format(Locale.ROOT, "%.2f", Math.exp(Z90 * Math.sqrt(r * r + s * s)));
  }

  @Test
  void theScalesAreTheReadmesTable() {
    Metric e2e = Metric.E2E_MEAN;
    Metric ttft = Metric.TTFT_MEAN;
    // | inside the family | 0.028 | 0.073 | x/÷ 1.05 |
    assertThat(f3(written.residual(e2e)) + " " + f3(written.residual(ttft)) + " " + times(null))
        .isEqualTo("0.028 0.073 1.05");
    // | gpu | 0.040 | 0.084 | x/÷ 1.08 |
    assertThat(f3(scale(Extrapolation.Kind.GPU, e2e)) + " " + f3(scale(Extrapolation.Kind.GPU, ttft)) + " "
        + times(Extrapolation.Kind.GPU)).isEqualTo("0.040 0.084 1.08");
    // | gpu_estimate | 0.064 | 0 (gpu's 0.084 in use) | x/÷ 1.12 |
    Ensemble.Scale estimate = written.extrapolation().get(Extrapolation.Kind.GPU_ESTIMATE);
    assertThat(f3(estimate.of(e2e)) + " " + f3(estimate.of(ttft)) + " " + f3(scale(Extrapolation.Kind.GPU_ESTIMATE, ttft))
        + " " + times(Extrapolation.Kind.GPU_ESTIMATE)).isEqualTo("0.064 0.000 0.084 1.12");
    // | gpu_assumed | none: the largest scale | 0.197 | 0.325 | x/÷ 1.39 |
    assertThat(written.extrapolation()).doesNotContainKey(Extrapolation.Kind.GPU_ASSUMED);
    assertThat(f3(scale(Extrapolation.Kind.GPU_ASSUMED, e2e)) + " " + f3(scale(Extrapolation.Kind.GPU_ASSUMED, ttft))
        + " " + times(Extrapolation.Kind.GPU_ASSUMED)).isEqualTo("0.197 0.325 1.39");
    // | TP above 4 | 0.062 | 0.155 | x/÷ 1.12 |
    assertThat(f3(scale(Extrapolation.Kind.TP, e2e)) + " " + f3(scale(Extrapolation.Kind.TP, ttft)) + " "
        + times(Extrapolation.Kind.TP)).isEqualTo("0.062 0.155 1.12");
    // | weight precision (FP8) | 0.113 | 0.325 | x/÷ 1.21 |
    assertThat(f3(scale(Extrapolation.Kind.PRECISION, e2e)) + " " + f3(scale(Extrapolation.Kind.PRECISION, ttft)) + " "
        + times(Extrapolation.Kind.PRECISION)).isEqualTo("0.113 0.325 1.21");
    // | expert count (16) | 0 | 0 |  and  | family (qwen3) | 0 | 0 | x/÷ 1.05 |
    assertThat(f3(scale(Extrapolation.Kind.EXPERTS, e2e)) + " " + f3(scale(Extrapolation.Kind.EXPERTS, ttft)))
        .isEqualTo("0.000 0.000");
    assertThat(f3(scale(Extrapolation.Kind.FAMILY, e2e)) + " " + f3(scale(Extrapolation.Kind.FAMILY, ttft)) + " "
        + times(Extrapolation.Kind.FAMILY)).isEqualTo("0.000 0.000 1.05");
    // | overloaded | 0.197 | 0.167 | x/÷ 1.39 |
    assertThat(f3(scale(Extrapolation.Kind.SATURATED, e2e)) + " " + f3(scale(Extrapolation.Kind.SATURATED, ttft)) + " "
        + times(Extrapolation.Kind.SATURATED)).isEqualTo("0.197 0.167 1.39");
  }

  @Test
  void theWrittenEnsembleIsTheOneTheCorpusEstimateKeeps() throws Exception {
    // docs/calibrated-cv-model-ensemble.yaml holds these 53 runs' scales; the bundled ensemble keeps
    // them as they are and adds the axes of the published measurements (corpusScalesAreTheBundled)
    Ensemble kept = Ensemble.load(Path.of("..", "docs", "calibrated-cv-model-ensemble.yaml"));
    assertThat(written.residualLogSd()).isEqualTo(kept.residualLogSd());
    assertThat(written.extrapolation()).isEqualTo(kept.extrapolation());
    assertThat(written.domain()).isEqualTo(kept.domain()).isEqualTo(Ensemble.bundled().domain());
    // it lists the 53 runs, in the order of the inputs, as the kept one does
    List<String> ids = new ArrayList<>();
    for (Path f : List.of(folds, oos)) {
      new ObjectMapper().readTree(f.toFile()).path("experiments").forEach(e -> ids.add(e.path("id").asText()));
    }
    assertThat(ids).hasSize(53).doesNotHaveDuplicates();
    assertThat(written.scaleRuns()).containsExactlyElementsOf(ids);
    assertThat(kept.scaleRuns()).containsExactlyElementsOf(ids);
  }

  /**
   * The bundled scales: the 53 runs' kept as they are, the new axes (top-k, engine generation, batch
   * extremes, bursts, sliding windows, layouts) estimated from the choosing half of the corpus of
   * published measurements given them (README, "Published measurements").
   */
  @Test
  void corpusScalesAreTheBundled(@TempDir Path dir) throws Exception {
    Path oosTopK = Path.of(getClass().getResource("/interval-scales/oos-topk.json").toURI());
    Path corpus = Path.of(getClass().getResource("/interval-scales/corpus-choosing.json").toURI());
    Path keep = Path.of("..", "docs", "calibrated-cv-model-ensemble.yaml");
    Path out = dir.resolve("e.yaml");
    BlisCliTest.Outcome o = BlisCliTest.blis("interval-scales", "--runs", folds.toString(), "--runs", oosTopK.toString(),
        "--runs", corpus.toString(), "--leave-out", "source", "--keep", keep.toString(), "--out", out.toString());
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(o.out()).startsWith("174 runs no fit saw");
    Ensemble e = Ensemble.load(out);
    Ensemble bundled = Ensemble.bundled();
    assertThat(e.residualLogSd()).isEqualTo(bundled.residualLogSd());
    // the same scales (to the last digits the sums' order leaves)
    assertThat(e.extrapolation().keySet()).containsExactlyElementsOf(bundled.extrapolation().keySet());
    for (var kind : e.extrapolation().entrySet()) {
      Ensemble.Scale b = bundled.extrapolation().get(kind.getKey());
      assertThat(kind.getValue().runs()).isEqualTo(b.runs());
      for (Metric m : Ensemble.METRICS) {
        assertThat(kind.getValue().of(m)).as(kind.getKey().key()).isCloseTo(b.of(m), org.assertj.core.api.Assertions.within(1e-12));
      }
    }
    assertThat(e.scaleRuns()).containsExactlyElementsOf(bundled.scaleRuns()).hasSize(174);
    // README: the new axes' mean-E2E scales
    Map<Extrapolation.Kind, String> readme = new LinkedHashMap<>();
    readme.put(Extrapolation.Kind.ENGINE_V1_SYNC, "0.234");
    readme.put(Extrapolation.Kind.ENGINE_V0, "0.144");
    readme.put(Extrapolation.Kind.ENGINE_V0_EARLY, "0.057");
    readme.put(Extrapolation.Kind.BATCH, "0.154");
    readme.put(Extrapolation.Kind.BURST, "0.483");
    readme.put(Extrapolation.Kind.ATTENTION, "0.305");
    readme.put(Extrapolation.Kind.TOPK, "0.000");
    readme.put(Extrapolation.Kind.LAYOUT, "0.634");
    readme.forEach((k, v) -> assertThat(f3(e.extrapolation().get(k).of(Metric.E2E_MEAN))).as(k.key()).isEqualTo(v));
    // the earlier kinds keep their scales
    assertThat(f3(e.extrapolation().get(Extrapolation.Kind.PRECISION).of(Metric.E2E_MEAN))).isEqualTo("0.113");
    // README: the choosing half's points inside their 90% intervals, with the scales of all of them
    // and with each source's scales estimated without that source
    List<IntervalScales.Run> all = new ArrayList<>();
    for (Path f : List.of(folds, oosTopK, corpus)) {
      all.addAll(IntervalScalesCommand.read(f));
    }
    Map<Metric, IntervalScales.Scales> kept = IntervalScales.scalesOf(Ensemble.load(keep));
    List<IntervalScales.Run> points = IntervalScalesCommand.read(corpus);
    IntervalScales.Scales allScales = IntervalScales.estimate(all, Ensemble.METRICS, 0.9, IntervalScales::sourceOf,
        kept).scales().get(Metric.E2E_MEAN);
    int inSample = 0;
    int leftOut = 0;
    for (IntervalScales.Run r : points) {
      inSample += covers(r, allScales) ? 1 : 0;
      String src = IntervalScales.sourceOf(r);
      List<IntervalScales.Run> others = all.stream().filter(x -> !IntervalScales.sourceOf(x).equals(src)).toList();
      IntervalScales.Scales without = IntervalScales.estimate(others, Ensemble.METRICS, 0.9, IntervalScales::sourceOf,
          kept).scales().get(Metric.E2E_MEAN);
      leftOut += covers(r, without) ? 1 : 0;
    }
    assertThat(points).hasSize(121);
    assertThat(inSample + "/" + leftOut).isEqualTo("113/107");
  }

  /** Whether run {@code r}'s mean-E2E-scale interval at 90% holds its observation. */
  private static boolean covers(IntervalScales.Run r, IntervalScales.Scales s) {
    double sm = r.memberLogSd().getOrDefault(Metric.E2E_MEAN, 0.0);
    double sd = s.logSd(r.kinds());
    return Math.abs(r.logError().get(Metric.E2E_MEAN)) <= Z90 * Math.sqrt(sm * sm + sd * sd);
  }

  @Test
  void onlyTheRunsKeptAreRecorded(@TempDir Path dir) {
    Path out = dir.resolve("e.yaml");
    BlisCliTest.Outcome o = BlisCliTest.blis("interval-scales", "--runs", folds.toString(), "--runs", oos.toString(),
        "--exclude", "^c-", "--out", out.toString());
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(o.out()).startsWith("24 runs no fit saw");
    Ensemble e = Ensemble.load(out);
    assertThat(e.scaleRuns()).hasSize(24).noneMatch(id -> id.startsWith("c-"));
    // the residual now rests on the 17 held-out folds alone
    assertThat(e.residual(Metric.E2E_MEAN)).isNotEqualTo(written.residual(Metric.E2E_MEAN));
  }

  /**
   * The median over some runs of the upper half-width of their 90% mean-E2E interval, {@code
   * exp(1.645 sqrt(s_members^2 + s_residual^2 + sum of the kinds' s^2)) - 1}, with the members'
   * spread of each run (as validate measured it) and the scales interval-scales wrote, in percent.
   */
  private double medianHalfWidth(Path file, Predicate<Set<String>> kinds) throws Exception {
    double r = written.residual(Metric.E2E_MEAN);
    List<Double> widths = new ArrayList<>();
    for (JsonNode e : new ObjectMapper().readTree(file.toFile()).path("experiments")) {
      JsonNode iv = e.path("interval").path("e2e_mean");
      Set<String> k = new TreeSet<>();
      iv.path("extrapolation_kinds").forEach(x -> k.add(x.asText()));
      if (!kinds.test(k)) {
        continue;
      }
      List<Extrapolation> distances = k.stream()
          .map(x -> new Extrapolation(Extrapolation.Kind.parse(x), "test")).toList();
      double sx = written.extrapolationLogSd(distances, Metric.E2E_MEAN);
      double sm = iv.path("member_log_sd").asDouble();
      widths.add(100 * (Math.exp(Z90 * Math.sqrt(sm * sm + r * r + sx * sx)) - 1));
    }
    double[] w = widths.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    assertThat(w).isNotEmpty();
    return w.length % 2 == 1 ? w[w.length / 2] : (w[w.length / 2 - 1] + w[w.length / 2]) / 2;
  }

  private static String pct(double v, int decimals) {
    return String.format(Locale.ROOT, "%." + decimals + "f", v);
  }

  @Test
  void medianHalfWidthsAreTheReadmes() throws Exception {
    // "5.8% over the 16 tier-C H100 runs" (the in-family runs of oos.json are tier C's)
    assertThat(pct(medianHalfWidth(oos, Set::isEmpty), 1)).isEqualTo("5.8");
    // "6.4% for the 17 held-out folds around their held-out predictions"
    assertThat(pct(medianHalfWidth(folds, Set::isEmpty), 1)).isEqualTo("6.4");
    // Qwen3-14B on H100: 5.3%
    assertThat(pct(medianHalfWidth(oos, Set.of("family")::equals), 1)).isEqualTo("5.3");
    // Mixtral-8x22B TP 8: 12%; Llama-4-Scout FP8: 21%; saturated: 40%
    assertThat(pct(medianHalfWidth(oos, Set.of("tp")::equals), 0)).isEqualTo("12");
    assertThat(pct(medianHalfWidth(oos, k -> k.contains("precision")), 0)).isEqualTo("21");
    assertThat(pct(medianHalfWidth(oos, Set.of("saturated")::equals), 0)).isEqualTo("40");
    // A100 and L40S: the README says 9.5% and 12.5%, which are half the interval's whole width over
    // the point, (high - low) / 2 / point; as the upper half-width every other figure is, they are:
    assertThat(pct(medianHalfWidth(oos, k -> k.contains("gpu")), 1)).isEqualTo("9.9");
    assertThat(pct(medianHalfWidth(oos, k -> k.contains("gpu_estimate")), 1)).isEqualTo("13.3");
  }
}
