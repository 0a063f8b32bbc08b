package io.blis.cli.sweep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.engine.capacity.CapacityReport;
import io.blis.engine.capacity.CapacitySearch;
import io.blis.engine.capacity.PointMetrics;
import io.blis.engine.capacity.RateWorkload;
import io.blis.engine.capacity.SloSet;
import io.blis.cli.BlisCli;
import io.blis.cli.report.ChartPage;
import io.blis.cli.report.ReportPages;
import io.blis.engine.cluster.Cluster;
import io.blis.engine.cluster.PolicySpec;
import io.blis.engine.cluster.PoolSpec;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SweepTest {

  /** Two cheap configurations (Llama-2-7B on one H100, two batch limits) and one that TP 3 cannot split. */
  private static final String GRID = """
      question: capacity
      slo: "ttft_p99=500ms,e2e_p99=20s"
      workload: {preset: chatbot, seed: 7}
      grid:
        model: llama-2-7b
        gpu: H100
        tp: [1, 3]
        max_num_seqs: [16, 64]
      search: {point_duration_s: 60, min_requests: 200, tolerance: 0.05}
      """;

  private static final String[] OUTPUTS = {Sweep.CSV, Sweep.JSONL, Sweep.SUMMARY, Sweep.REPORT};

  @TempDir Path tmp;

  private SweepGrid grid;
  private Path first;
  private Sweep.Outcome firstOutcome;

  @BeforeAll
  void runOnceOnOneThread(@TempDir Path dir) throws IOException {
    Files.writeString(dir.resolve("grid.yaml"), GRID);
    grid = SweepGrid.load(dir.resolve("grid.yaml"));
    first = dir.resolve("one-thread");
    firstOutcome = Sweep.of(grid).threads(1).run(first);
  }

  private static String read(Path p) throws IOException {
    return Files.readString(p, StandardCharsets.UTF_8);
  }

  private static List<JsonNode> rows(Path dir) throws IOException {
    List<JsonNode> out = new ArrayList<>();
    ObjectMapper m = new ObjectMapper();
    for (String line : read(dir.resolve(Sweep.JSONL)).split("\n")) {
      out.add(m.readTree(line));
    }
    return out;
  }

  @Test
  void theGridIsExpandedInOrderAndTheInvalidCombinationIsRecordedAsSkipped() throws IOException {
    assertThat(grid.configs()).extracting(c -> c.tp() + "/" + c.maxNumSeqs()).containsExactly("1/16", "1/64", "3/16", "3/64");
    List<JsonNode> rows = rows(first);
    assertThat(rows).extracting(r -> r.get("status").asText()).containsExactly("ok", "ok", "skipped", "skipped");
    assertThat(rows.get(2).get("reason").asText()).contains("num_attention_heads (32) is not divisible by tensor parallelism 3");
    assertThat(rows.get(2).get("capacity_rps").isNull()).isTrue();
    assertThat(firstOutcome.simulated()).isEqualTo(4);
    assertThat(read(first.resolve(Sweep.CSV)).lines()).hasSize(5).first().asString()
        .startsWith("index,key,model,gpu,tp,pp,dp,ep,replicas,gpus,");
    JsonNode summary = new ObjectMapper().readTree(read(first.resolve(Sweep.SUMMARY)));
    assertThat(summary.get("skipped").asInt()).isEqualTo(2);
    assertThat(summary.get("best").get("index").asInt()).isEqualTo(rows.stream()
        .filter(r -> r.get("best").asBoolean()).findFirst().orElseThrow().get("index").asInt());
  }

  /** The directory lock is deleted by its holder: a finished sweep leaves no .sweep.lock behind. */
  @Test
  void aFinishedSweepLeavesNoLockFile() throws IOException {
    assertThat(first.resolve(".sweep.lock")).doesNotExist();
    assertThat(first.resolve(Sweep.POINTS)).exists();
  }

  /** While another holds the directory's lock, a sweep refuses to write there and leaves the lock alone. */
  @Test
  void aLockedDirectoryIsRefused() throws IOException {
    Path dir = tmp.resolve("locked");
    Files.createDirectories(dir);
    Path lockFile = dir.resolve(".sweep.lock");
    try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(lockFile,
        java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.WRITE);
        java.nio.channels.FileLock held = ch.lock()) {
      assertThatThrownBy(() -> Sweep.of(grid).threads(1).run(dir))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("another sweep is writing this directory");
      assertThat(lockFile).exists();
      assertThat(dir.resolve(Sweep.POINTS)).doesNotExist();
    }
  }

  @Test
  void eachRowEqualsItsCapacitySearchRunAlone() throws IOException {
    List<JsonNode> rows = rows(first);
    for (int i = 0; i < 2; i++) {
      JsonNode row = rows.get(i);
      int seqs = row.get("max_num_seqs").asInt();
      // the deployment built by hand, as blis run would: Cluster.builder() with the pool's fields
      CapacitySearch.DeploymentFactory f = (n, c) -> Cluster.builder()
          .defaults(new PoolSpec("default", 1, "llama-2-7b", "H100", 1, "trained-physics", null, seqs, 2048, 0, null, 16,
              null, 0.9))
          .instances(n == 0 ? 1 : n).router(new PolicySpec("round-robin", Map.of())).scheduler("fcfs").toSimulation();
      CapacitySearch.Settings d = CapacitySearch.Settings.defaults();
      CapacitySearch s = new CapacitySearch(f, RateWorkload.preset("chatbot", 7), SloSet.parse("ttft_p99=500ms,e2e_p99=20s"),
          new CapacitySearch.Settings(60, 200, d.maxRequests(), d.warmup(), 0.05, d.startRps(), d.maxRps(), d.minRps()));
      CapacitySearch.Found max = s.maxRate(null);
      CapacitySearch.Found sat = s.saturationRate(null);
      assertThat(row.get("capacity_rps").asDouble()).as("seqs %d", seqs).isEqualTo(max.rateRps());
      assertThat(row.get("saturation_rps").asDouble()).isEqualTo(sat.rateRps());
      assertThat(row.get("points_simulated").asInt()).isEqualTo(max.points().size() + sat.points().size());
      PointMetrics m = max.at().metrics();
      assertThat(row.get("measured").asInt()).isEqualTo(m.measured());
      assertThat(row.get("completed").asInt()).isEqualTo(m.completed());
      assertThat(row.get("achieved_rps").asDouble()).isCloseTo(m.achievedRps(), within(1e-5 * m.achievedRps()));
      for (String stat : List.of("ttft_p99", "e2e_p99", "e2e_mean", "tpot_p50")) {
        assertThat(row.get(stat + "_ms").asDouble()).as(stat).isCloseTo(m.value(stat) / 1000, within(1e-5 * m.value(stat) / 1000));
      }
      assertThat(row.get("meets_slo").asBoolean()).isTrue();
      // output tokens per second: completions per second times the measured requests' mean output
      assertThat(row.get("output_tokens_per_s").asDouble()).isCloseTo(
          row.get("achieved_rps").asDouble() * row.get("mean_output_tokens").asDouble(), within(0.01));
      assertThat(row.get("mean_output_tokens").asDouble()).isBetween(150.0, 400.0);
      // the record keeps every point of both searches, in the order simulated: the report's curve
      JsonNode rec = records(first).get(row.get("key").asText());
      assertCurve(rec.at("/capacity/points"), max.points());
      assertCurve(rec.at("/saturation/points"), sat.points());
    }
  }

  private static Map<String, JsonNode> records(Path dir) throws IOException {
    Map<String, JsonNode> out = new java.util.LinkedHashMap<>();
    ObjectMapper m = new ObjectMapper();
    for (String line : read(dir.resolve(Sweep.POINTS)).split("\n")) {
      JsonNode r = m.readTree(line);
      out.put(r.get("key").asText(), r);
    }
    return out;
  }

  private static void assertCurve(JsonNode recorded, List<CapacitySearch.Point> points) {
    assertThat(recorded).hasSize(points.size());
    for (int i = 0; i < points.size(); i++) {
      CapacitySearch.Point p = points.get(i);
      JsonNode r = recorded.get(i);
      assertThat(r.get("rate_rps").asDouble()).isCloseTo(p.rateRps(), within(1e-5 * p.rateRps()));
      assertThat(r.get("steady").asBoolean()).isEqualTo(p.metrics().steady());
      assertThat(r.get("meets_slo").asBoolean()).isEqualTo(p.meetsTargets());
      assertThat(r.get("achieved_rps").asDouble()).isCloseTo(p.metrics().achievedRps(),
          within(1e-5 * p.metrics().achievedRps()));
      double e2e = p.metrics().value("e2e_p99") / 1000;
      if (Double.isFinite(e2e)) {
        assertThat(r.get("e2e_p99_ms").asDouble()).isCloseTo(e2e, within(1e-5 * e2e));
      } else {
        assertThat(r.get("e2e_p99_ms").isNull()).as("a point with unfinished requests has no p99").isTrue();
      }
    }
  }

  @Test
  void theReportDrawsEverySimulatedPointTheFrontierAndNamesTheBest() throws IOException {
    String html = read(first.resolve(Sweep.REPORT));
    List<JsonNode> specs = ReportPages.specs(html);
    assertThat(specs).hasSize(2);
    assertThat(ReportPages.loadsExternalResources(html)).isFalse();
    Map<String, JsonNode> recs = records(first);
    List<JsonNode> rows = rows(first);
    for (int i = 0; i < 2; i++) {
      JsonNode rec = recs.get(rows.get(i).get("key").asText());
      // the distinct rates of both searches with a finite p99, by rate
      java.util.TreeMap<Double, JsonNode> expected = new java.util.TreeMap<>();
      for (String search : List.of("/capacity/points", "/saturation/points")) {
        rec.at(search).forEach(p -> {
          if (p.get("e2e_p99_ms").isNumber()) {
            expected.putIfAbsent(p.get("rate_rps").asDouble(), p);
          }
        });
      }
      String label = "#" + i + " tp=1 max_num_seqs=" + rows.get(i).get("max_num_seqs").asInt();
      List<JsonNode> drawn = ReportPages.rows(specs.get(0), "points", p -> p.get("config").asText().equals(label));
      assertThat(drawn).extracting(p -> p.get("rate_rps").asDouble()).containsExactlyElementsOf(expected.keySet());
      for (JsonNode p : drawn) {
        JsonNode r = expected.get(p.get("rate_rps").asDouble());
        assertThat(p.get("latency_ms").asDouble()).isEqualTo(r.get("e2e_p99_ms").asDouble());
        assertThat(p.get("achieved_rps").asDouble()).isEqualTo(r.get("achieved_rps").asDouble());
        assertThat(p.get("point").asText()).isEqualTo(!r.get("steady").asBoolean() ? SweepReport.NOT_STEADY
            : r.get("meets_slo").asBoolean() ? SweepReport.MEETS : SweepReport.MISSES);
      }
      assertThat(drawn).extracting(p -> p.get("point").asText()).contains(SweepReport.MEETS);
      // the capacity ring sits at the row's point
      JsonNode ring = ReportPages.rows(specs.get(0), "capacities", p -> p.get("config").asText().equals(label)).get(0);
      assertThat(ring.get("capacity_rps").asDouble()).isEqualTo(rows.get(i).get("capacity_rps").asDouble());
      assertThat(ring.get("latency_ms").asDouble()).isEqualTo(rows.get(i).get("e2e_p99_ms").asDouble());
    }
    // the frontier chart: both configurations that ran, the best one marked as the table marks it
    List<JsonNode> frontier = ReportPages.rows(specs.get(1), "rows");
    assertThat(frontier).hasSize(2);
    int best = rows.stream().filter(r -> r.get("best").asBoolean()).findFirst().orElseThrow().get("index").asInt();
    assertThat(frontier.get(best).get("role").asText()).isEqualTo(SweepReport.BEST);
    assertThat(frontier.get(best).get("rps_per_usd_hour").asDouble())
        .isEqualTo(rows.get(best).get("rps_per_usd_hour").asDouble());
    assertThat(html).contains("Best configuration: #" + best + " ")
        .contains(ChartPage.escape(rows.get(best).get("key").asText()))
        .contains("num_attention_heads (32) is not divisible by tensor parallelism 3");
  }

  @Test
  void labelsNameTheFieldsThatDiffer() {
    Map<Integer, String> labels = SweepReport.labels(grid.configs());
    assertThat(labels.values()).containsExactly("#0 tp=1 max_num_seqs=16", "#1 tp=1 max_num_seqs=64",
        "#2 tp=3 max_num_seqs=16", "#3 tp=3 max_num_seqs=64");
    assertThat(SweepReport.labels(List.of(SweepConfig.DEFAULTS)).get(0))
        .isEqualTo("#0 model=meta-llama/Llama-2-7b-hf gpu=H100");
  }

  @Test
  void intervalsAreTheCapacitySearchesOfEachEnsembleMemberAsBlisCapacityFindsThem() throws IOException {
    Path dir = tmp.resolve("intervals");
    Files.createDirectories(dir);
    Files.writeString(dir.resolve("grid.yaml"), """
        question: capacity
        slo: "ttft_p99=500ms,e2e_p99=20s"
        workload: {preset: chatbot, seed: 7}
        grid: {model: llama-2-7b, gpu: [H100, A100-80GB], max_num_seqs: 16}
        search: {point_duration_s: 30, min_requests: 100, tolerance: 0.1, saturation: false}
        intervals: {level: 0.8}
        """);
    SweepGrid g = SweepGrid.load(dir.resolve("grid.yaml"));
    assertThat(g.fingerprint()).isNotEqualTo(SweepGrid.parse(read(dir.resolve("grid.yaml")).replace("intervals: {level: 0.8}", ""),
        "g.yaml", dir).fingerprint());
    Sweep.of(g).threads(1).run(dir.resolve("out"));
    List<JsonNode> rows = rows(dir.resolve("out"));
    assertThat(rows).hasSize(2);
    for (int i = 0; i < 2; i++) {
      JsonNode row = rows.get(i);
      SweepConfig c = g.configs().get(i);
      double cap = row.get("capacity_rps").asDouble();
      assertThat(row.get("interval_level").asDouble()).isEqualTo(0.8);
      assertThat(row.get("capacity_low_rps").asDouble()).isPositive().isLessThanOrEqualTo(cap);
      assertThat(row.get("capacity_high_rps").asDouble()).isGreaterThanOrEqualTo(cap);
      // the same interval as blis capacity computes it for the same deployment and search
      CapacitySearch alone = new CapacitySearch(g.deployment().factory(c), g.workload(), g.slo(), g.settings());
      var pd = g.deployment().resolved(c);
      CapacityReport.RateInterval ri = CapacityReport.RateInterval.of(alone, cap, g.intervals().ensemble(),
          g.intervals().ensemble().distances(pd.model(), pd.gpu(), pd.tp()), 0.8);
      assertThat(row.get("capacity_low_rps").asDouble()).isCloseTo(ri.low(), within(1e-5 * ri.low()));
      assertThat(row.get("capacity_high_rps").asDouble()).isCloseTo(ri.high(), within(1e-5 * ri.high()));
      assertThat(ri.memberRates()).hasSize(g.intervals().ensemble().members().size());
    }
    // in the fit's family nothing is extrapolated; on the A100 the GPU is, and the interval is wider
    assertThat(rows.get(0).get("extrapolation").asText()).isEmpty();
    assertThat(rows.get(1).get("extrapolation").asText()).contains("gpu A100-80GB not in fit");
    double w0 = rows.get(0).get("capacity_high_rps").asDouble() / rows.get(0).get("capacity_low_rps").asDouble();
    double w1 = rows.get(1).get("capacity_high_rps").asDouble() / rows.get(1).get("capacity_low_rps").asDouble();
    assertThat(w1).isGreaterThan(w0);
    // a latency model other than the ensemble's is one line naming it
    assertThatThrownBy(() -> SweepGrid.parse(read(dir.resolve("grid.yaml")) + "deployment: {latency_model: roofline}\n",
        "g.yaml", dir)).hasMessageContaining("the ensemble holds trained-physics coefficients but the latency model is roofline");
  }

  @Test
  void twoThreadsWriteTheSameBytesAsOne() throws IOException {
    Path two = tmp.resolve("two-threads");
    Sweep.of(grid).threads(2).run(two);
    for (String f : OUTPUTS) {
      assertThat(read(two.resolve(f))).as(f).isEqualTo(read(first.resolve(f)));
    }
  }

  @Test
  void aKilledSweepResumedWritesTheSameBytes() throws IOException {
    Path resumed = tmp.resolve("resumed");
    Files.createDirectories(resumed);
    List<String> lines = read(first.resolve(Sweep.POINTS)).lines().toList();
    assertThat(lines).hasSize(4);
    // killed while writing: the first line complete, half of the second
    String partial = lines.get(0) + "\n" + lines.get(1).substring(0, lines.get(1).length() / 2);
    Files.writeString(resumed.resolve(Sweep.POINTS), partial);
    List<String> progress = new ArrayList<>();
    Sweep.Outcome o = Sweep.of(grid).threads(2).progress(progress::add).run(resumed);
    assertThat(o.reused()).isEqualTo(1);
    assertThat(o.simulated()).isEqualTo(3);
    assertThat(progress).anyMatch(l -> l.contains("ignored a half-written last line"));
    // each point done is named as the report names it: #its index in the grid, then its key
    List<String> done = progress.stream().filter(l -> l.startsWith("[")).toList();
    assertThat(done).hasSize(3);
    for (int i = 1; i < 4; i++) {
      String named = "#" + i + " " + grid.configs().get(i).key() + ": ";
      assertThat(done).as(named).anyMatch(l -> l.matches("\\[[123]/3\\] " + java.util.regex.Pattern.quote(named) + ".*"));
    }
    for (String f : OUTPUTS) {
      assertThat(read(resumed.resolve(f))).as(f).isEqualTo(read(first.resolve(f)));
    }
    assertThat(read(resumed.resolve(Sweep.POINTS)).lines()).hasSize(4).allMatch(l -> l.startsWith("{\"fingerprint\""));
    // nothing left to run: a rerun reuses every configuration and rewrites the same tables
    Sweep.Outcome again = Sweep.of(grid).run(resumed);
    assertThat(again.simulated()).isZero();
    assertThat(read(resumed.resolve(Sweep.CSV))).isEqualTo(read(first.resolve(Sweep.CSV)));
  }

  @Test
  void recordsOfAnotherQuestionAreNotReused() throws IOException {
    Path dir = tmp.resolve("other");
    Files.createDirectories(dir);
    Files.copy(first.resolve(Sweep.POINTS), dir.resolve(Sweep.POINTS));
    // only skipped configurations, so that this runs in no time; another SLO, so another fingerprint
    SweepGrid other = SweepGrid.parse(GRID.replace("500ms", "400ms").replace("tp: [1, 3]", "tp: 3"), "other.yaml", tmp);
    assertThat(other.fingerprint()).isNotEqualTo(grid.fingerprint());
    List<String> progress = new ArrayList<>();
    Sweep.Outcome o = Sweep.of(other).progress(progress::add).run(dir);
    assertThat(o.reused()).isZero();
    assertThat(progress).anyMatch(l -> l.contains("4 records of another question"));
    assertThat(read(dir.resolve(Sweep.POINTS)).lines()).hasSize(6);
  }

  @Test
  void aDamagedRecordInTheMiddleIsReportedWithItsLine() throws IOException {
    Path dir = tmp.resolve("damaged");
    Files.createDirectories(dir);
    Files.writeString(dir.resolve(Sweep.POINTS), "{\"fingerprint\":\"x\",\"key\":\"k\",\"status\":\"ok\"}\nnot json\n");
    SweepGrid skippedOnly = SweepGrid.parse(GRID.replace("tp: [1, 3]", "tp: 3"), "g.yaml", tmp);
    assertThatThrownBy(() -> Sweep.of(skippedOnly).run(dir))
        .hasMessageStartingWith(dir.resolve(Sweep.POINTS) + ":2: not a sweep record");
  }

  @Test
  void theRatesQuestionGivesEachRateAsCapacitySearchEvaluatesIt() throws IOException {
    String text = """
        question: rates
        rates: [5, 60]
        slo: "ttft_p99=500ms"
        workload: {preset: chatbot, seed: 7}
        points:
          - {model: llama-2-7b, gpu: H100, max_num_seqs: 64}
        search: {point_duration_s: 60, min_requests: 200}
        """;
    SweepGrid g = SweepGrid.parse(text, "rates.yaml", tmp);
    Path dir = tmp.resolve("rates");
    SweepTable t = Sweep.of(g).prices(PriceTable.parse("H100: 2.5", "p.yaml", false)).run(dir).table();
    assertThat(t.rows()).hasSize(2);
    CapacitySearch direct = new CapacitySearch(g.deployment().factory(g.configs().get(0)), g.workload(), g.slo(), g.settings());
    for (int i = 0; i < 2; i++) {
      ObjectNode row = t.rows().get(i);
      CapacitySearch.Point p = direct.evaluate(g.rates().get(i), 0, null);
      assertThat(row.get("rate_rps").asDouble()).isEqualTo(g.rates().get(i));
      assertThat(row.get("steady").asBoolean()).isEqualTo(p.metrics().steady());
      assertThat(row.get("meets_slo").asBoolean()).isEqualTo(p.meetsTargets());
      assertThat(row.get("violations").asText()).isEqualTo(String.join("; ", PointRun.ordered(p.violations())));
      assertThat(row.get("measured").asInt()).isEqualTo(p.metrics().measured());
      assertThat(row.get("achieved_rps").asDouble()).isCloseTo(p.metrics().achievedRps(), within(1e-5 * p.metrics().achievedRps()));
      assertThat(row.get("cost_per_hour_usd").asDouble()).isEqualTo(2.5);
      double perMillion = 2.5 / (row.get("output_tokens_per_s").asDouble() * 3600) * 1e6;
      assertThat(row.get("usd_per_million_output_tokens").asDouble()).isCloseTo(perMillion, within(1e-5 * perMillion));
      double perDollar = row.get("achieved_rps").asDouble() / 2.5;
      assertThat(row.get("rps_per_usd_hour").asDouble()).isCloseTo(perDollar, within(1e-5 * perDollar));
      assertThat(row.get("price_source").asText()).isEqualTo("p.yaml");
      assertThat(row.get("example_price").asBoolean()).isFalse();
    }
    // 60 req/s is past saturation: not steady, never best
    assertThat(t.rows().get(1).get("steady").asBoolean()).isFalse();
    assertThat(t.rows().get(0).get("best").asBoolean()).isTrue();
    assertThat(t.rows().get(1).get("best").asBoolean()).isFalse();
    // the report: the rates' points as the curve, the steady one best, the other no candidate
    List<JsonNode> specs = ReportPages.specs(read(dir.resolve(Sweep.REPORT)));
    List<JsonNode> drawn = ReportPages.rows(specs.get(0), "points");
    assertThat(drawn.get(0).get("rate_rps").asDouble()).isEqualTo(5.0);
    assertThat(drawn.get(0).get("point").asText()).isEqualTo(t.rows().get(0).get("meets_slo").asBoolean()
        ? SweepReport.MEETS : SweepReport.MISSES);
    assertThat(drawn).allMatch(p -> !p.get("point").asText().equals(SweepReport.NOT_STEADY)
        || p.get("rate_rps").asDouble() == 60.0);
    List<JsonNode> frontier = ReportPages.rows(specs.get(1), "rows");
    assertThat(frontier.get(0).get("role").asText()).isEqualTo(SweepReport.BEST);
    assertThat(frontier.get(0).get("config").asText()).isEqualTo("#0 model=llama-2-7b gpu=H100 @ 5 req/s");
    assertThat(frontier.subList(1, frontier.size())).allMatch(r -> r.get("role").asText().equals(SweepReport.NOT_CANDIDATE));
  }

  @Test
  void outputTokensPerSecondIsTheWindowsCompletionsTimesTheirOutputWorkedByHand() throws IOException {
    // a trace of 51 requests, one every 10 s from 0 to 500 s, of 100 prompt tokens and 10, 20, 30,
    // 40, 50, 10, ... output tokens (request i: 10 + 10 (i mod 5)); at 0.1 req/s it plays as written
    Path dir = tmp.resolve("tokens");
    Files.createDirectories(dir);
    StringBuilder trace = new StringBuilder("# blis-trace {\"version\":1,\"time_unit\":\"us\",\"token_seed\":1,"
        + "\"token_ids\":false}\n"
        + "id,arrival_us,input_tokens,output_tokens,prefix_group,prefix_length,content_id,session_id,round,slo_class,"
        + "tenant,stage,timeout_us\n");
    int[] output = new int[51];
    for (int i = 0; i < 51; i++) {
      output[i] = 10 + 10 * (i % 5);
      trace.append(i).append(',').append(i * 10_000_000L).append(",100,").append(output[i])
          .append(",,0,").append(1000 + i).append(",-1,0,standard,,0,0\n");
    }
    Files.writeString(dir.resolve("trace.csv"), trace.toString());
    SweepGrid g = SweepGrid.parse("""
        question: rates
        rates: [0.1]
        workload: {trace: trace.csv}
        points:
          - {model: llama-2-7b, gpu: H100}
        search: {min_requests: 10}
        """, "tokens.yaml", dir);
    ObjectNode row = Sweep.of(g).run(dir.resolve("out")).table().rows().get(0);
    // By hand, from the definitions (PointMetrics, docs/capacity.md): the first 20% of the arrival
    // span (0-100 s) is warm-up; the measured requests are those arriving in [100 s, 500 s], i = 10..50.
    // Each request is alone on the server and done well within its 10 s (at most 50 tokens), so the
    // completions inside the window are those of i = 10..49 (i = 50 finishes after 500 s): 40 in
    // 400 s, 0.1 req/s. Their output: the measured requests' mean, sum over i = 10..50 / 41 = 1210 / 41.
    assertThat(row.get("e2e_p99_ms").asDouble()).isLessThan(10_000);
    int sum = 0;
    for (int i = 10; i <= 50; i++) {
      sum += output[i];
    }
    assertThat(sum).isEqualTo(1210);
    assertThat(row.get("measured").asInt()).isEqualTo(41);
    assertThat(row.get("completed").asInt()).isEqualTo(41);
    assertThat(row.get("achieved_rps").asDouble()).isEqualTo(0.1);
    assertThat(row.get("mean_output_tokens").asDouble()).isCloseTo(sum / 41.0, within(1e-5));
    // output_tokens_per_s = 40 completions / 400 s x 1210 / 41 tokens = 2.95122 (the prompt tokens
    // would give 10, the whole trace's mean output 2.96)
    double expected = 40 / 400.0 * sum / 41.0;
    assertThat(row.get("output_tokens_per_s").asDouble()).isCloseTo(expected, within(1e-5 * expected));
    assertThat(row.get("output_tokens_per_s").asDouble()).isCloseTo(2.95122, within(1e-5));
  }

  @Test
  void theFingerprintAndTheSummaryDoNotDependOnTheOrderOfTheTargetsMaps() {
    // SloSet keeps its targets in the order given; the sweep's fingerprint and summary must not
    // depend on that order
    SweepGrid a = SweepGrid.parse(GRID, "a.yaml", tmp);
    SweepGrid b = SweepGrid.parse(GRID.replace("\"ttft_p99=500ms,e2e_p99=20s\"", "\"e2e_p99=20s,ttft_p99=500ms\""), "b.yaml", tmp);
    assertThat(a.fingerprintText()).contains("\nslo=e2e_p99=20000ms,ttft_p99=500ms\n");
    assertThat(b.fingerprint()).isEqualTo(a.fingerprint());
    assertThat(SweepGrid.describe(SloSet.parse("goodput=99%,ttft=300,e2e=10s,tpot_p50=30ms")))
        .isEqualTo("tpot_p50=30ms,goodput=99%,e2e=10000ms,ttft=300ms");
    assertThat(PointRun.ordered(List.of("ttft_p99 2.0 ms > 1 ms", "e2e_p99 9.0 ms > 1 ms", "not steady: x")))
        .containsExactly("not steady: x", "e2e_p99 9.0 ms > 1 ms", "ttft_p99 2.0 ms > 1 ms");
  }

  // ------------------------------------------------------------------ the table, by hand

  /** A grid of two configurations whose records are written by hand (nothing is simulated). */
  private SweepGrid handGrid() {
    return SweepGrid.parse("""
        question: capacity
        slo: "e2e_p99=20s"
        workload: {preset: chatbot}
        points:
          - {gpu: H100, tp: 4, replicas: 2}
          - {gpu: L40S}
          - {gpu: A100-80GB}
          - {gpu: H200}
        """, "hand.yaml", tmp);
  }

  private static ObjectNode record(SweepGrid g, int i, Double capacity, double achieved, double meanOut, double e2eP99) {
    ObjectNode r = new ObjectMapper().createObjectNode();
    r.put("fingerprint", g.fingerprint());
    r.put("key", g.configs().get(i).key());
    r.put("status", "ok");
    r.put("gpu_name", g.configs().get(i).gpu());
    ObjectNode cap = r.putObject("capacity");
    if (capacity == null) {
      cap.putNull("rate_rps");
      cap.putArray("violations_at_lowest_rate").add("e2e_p99 30000.0 ms > 20000 ms");
    } else {
      cap.put("rate_rps", capacity);
      ObjectNode at = cap.putObject("at");
      at.put("rate_rps", capacity);
      at.put("meets_slo", true);
      at.put("steady", true);
      at.putArray("violations");
      at.put("achieved_rps", achieved);
      at.put("mean_output_tokens", meanOut);
      at.put("output_tokens_per_s", achieved * meanOut);
      at.put("e2e_p99_ms", e2eP99);
    }
    cap.put("lower_bound", false);
    cap.put("points_simulated", 10);
    return r;
  }

  @Test
  void costsParetoAndBestAreComputedAsWrittenByHand() {
    SweepGrid g = handGrid();
    PriceTable prices = PriceTable.parse("""
        H100: 2.0
        L40S: 0.5
        A100: 1.0
        """, "prices.yaml", false); // A100 is an alias of A100-80GB; H200 has no price
    List<JsonNode> recs = List.of(
        record(g, 0, 80.0, 79.0, 200, 9000),   // 8 GPUs x 2 USD = 16 USD/h: 5 req/s per USD-hour
        record(g, 1, 4.0, 4.0, 250, 15000),    // 0.5 USD/h: 8 req/s per USD-hour, slower
        record(g, 2, null, 0, 0, 0),           // meets the SLO at no rate
        record(g, 3, 40.0, 40.0, 250, 5000));  // no price
    SweepTable t = SweepTable.of(g, prices, recs);
    ObjectNode h100 = t.rows().get(0);
    assertThat(h100.get("gpus").asInt()).isEqualTo(8);
    assertThat(h100.get("cost_per_hour_usd").decimalValue()).isEqualByComparingTo("16");
    // 16 USD/h / (79 x 200 tokens/s x 3600 s/h) x 1e6 = 0.281294 USD per million output tokens
    assertThat(h100.get("usd_per_million_output_tokens").decimalValue()).isEqualByComparingTo("0.281294");
    assertThat(h100.get("rps_per_usd_hour").decimalValue()).isEqualByComparingTo("5");
    ObjectNode l40s = t.rows().get(1);
    assertThat(l40s.get("cost_per_hour_usd").decimalValue()).isEqualByComparingTo("0.5");
    assertThat(l40s.get("rps_per_usd_hour").decimalValue()).isEqualByComparingTo("8");
    assertThat(l40s.get("usd_per_million_output_tokens").decimalValue()).isEqualByComparingTo("0.138889");
    ObjectNode a100 = t.rows().get(2);
    assertThat(a100.get("meets_slo").asBoolean()).isFalse();
    assertThat(a100.get("usd_per_gpu_hour").decimalValue()).isEqualByComparingTo("1");
    assertThat(a100.get("cost_per_hour_usd").decimalValue()).isEqualByComparingTo("1");
    assertThat(a100.get("rps_per_usd_hour").isNull()).isTrue();
    assertThat(a100.get("note").asText()).startsWith("no rate down to 0.001 req/s met the SLO");
    ObjectNode h200 = t.rows().get(3);
    assertThat(h200.get("cost_per_hour_usd").isNull()).isTrue();
    assertThat(h200.get("usd_per_million_output_tokens").isNull()).isTrue();
    assertThat(h200.get("note").asText()).isEqualTo("no price for GPU H200 (give one with --prices)");
    // frontier: L40S (more req/s per dollar) and H100 (lower latency); best: L40S
    assertThat(t.rows()).extracting(r -> r.get("pareto").asBoolean()).containsExactly(true, true, false, false);
    assertThat(t.rows()).extracting(r -> r.get("best").asBoolean()).containsExactly(false, true, false, false);
    assertThat(t.summary().get("best").get("key").asText()).isEqualTo(g.configs().get(1).key());
    assertThat(t.summary().get("pareto")).extracting(p -> p.get("index").asInt()).containsExactly(0, 1);
    assertThat(t.summary().get("example_prices_used").asBoolean()).isFalse();
    // every row has exactly the columns, in order
    for (ObjectNode row : t.rows()) {
      List<String> keys = new ArrayList<>();
      row.fieldNames().forEachRemaining(keys::add);
      assertThat(keys).isEqualTo(t.columns());
    }
  }

  @Test
  void theBundledPricesAreExamplesAndAFileOverridesThemGpuByGpu() {
    PriceTable bundled = PriceTable.bundled();
    assertThat(bundled.priceOf("H100")).get().extracting(PriceTable.Price::example).isEqualTo(true);
    assertThat(bundled.priceOf("h100-sxm")).isEqualTo(bundled.priceOf("H100"));
    PriceTable mine = bundled.overriddenBy(PriceTable.parse("H100-SXM: 2.2\nmy-gpu: 9\n", "mine.yaml", false));
    assertThat(mine.priceOf("H100").orElseThrow().usdPerGpuHour()).isEqualTo(2.2);
    assertThat(mine.priceOf("H100").orElseThrow().example()).isFalse();
    assertThat(mine.priceOf("L40S").orElseThrow().example()).isTrue();
    assertThat(mine.priceOf("my-gpu").orElseThrow().usdPerGpuHour()).isEqualTo(9);
    assertThatThrownBy(() -> PriceTable.parse("H100: 2\nL40S: -1\n", "p.yaml", false))
        .hasMessage("p.yaml:2:1: the price of 'L40S' must be a positive number of USD per GPU-hour, got -1.0");
    assertThatThrownBy(() -> PriceTable.parse("H100: cheap\n", "p.yaml", false))
        .hasMessage("p.yaml:1:1: at 'H100': expected a number, got the text 'cheap'");
    assertThatThrownBy(() -> PriceTable.parse("H100: 2\nh100-sxm: 3\n", "p.yaml", false))
        .hasMessageContaining("p.yaml:2:1: 'h100-sxm' is another name of H100");
    // YAML's not-a-number: a clear line, not Java's "For input string"
    assertThatThrownBy(() -> PriceTable.parse("H100: .nan\n", "p.yaml", false))
        .hasMessage("p.yaml:1:11: malformed number '.nan' (expected a finite number)");
  }

  // ------------------------------------------------------------------ bad grids

  @ParameterizedTest
  @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
      slo: "ttft_p98=1s"                         | g.yaml:2:1: slo: 'ttft_p98=1s': unknown statistic 'p98'
      slo: "ttft_p99=fast"                       | g.yaml:2:1: slo: 'ttft_p99=fast': 'fast' is not a duration
      slo: 5                                     | g.yaml:2:1: slo: '5': expected KEY=VALUE
      slo: "goodput=99%"                         | g.yaml:2:1: slo: goodput without per-request targets counts each request against its SLO class's targets, which a sweep does not set
      slo: "ttft_p99=1s"\\ngrid: {tpp: [1]}       | g.yaml:3:8: unknown key 'tpp' in grid; expected one of [
      slo: "ttft_p99=1s"\\ngrid: {tp: [1, x]}     | g.yaml:3:16: at 'grid.tp[1]': expected an integer, got the text 'x'
      slo: "ttft_p99=1s"\\ngrid: {tp: [1, 0]}     | g.yaml:3:16: grid.tp[1]: must be a whole number of at least 1, got 0
      slo: "ttft_p99=1s"\\ngrid: {gpu: [H1000]}   | g.yaml:3:14: grid.gpu[0]: unknown GPU 'H1000'; bundled GPUs: H100,
      slo: "ttft_p99=1s"\\ngrid: {router: [rr]}   | g.yaml:3:17: grid.router[0]: unknown router 'rr'; available:
      slo: "ttft_p99=1s"\\ngrid: {tp: [2, 2]}     | g.yaml:3:16: grid.tp lists 2 twice
      slo: "ttft_p99=1s"\\ngrid: {model: [llama-2-7b, meta-llama/Llama-2-7b-hf]} | g.yaml:3:28: grid.model lists meta-llama/Llama-2-7b-hf twice (as llama-2-7b at [0]: both name meta-llama/Llama-2-7b-hf)
      slo: "ttft_p99=1s"\\ngrid: {gpu: [H100, h100]} | g.yaml:3:20: grid.gpu lists h100 twice (as H100 at [0]: both name H100)
      slo: "ttft_p99=1s"\\nsearch: {tolerance: 2} | g.yaml:3:10: at 'search': tolerance must be in [0.001, 0.5], got 2.0
      slo: "ttft_p99=1s"\\nrates: [1]             | g.yaml:3:1: rates apply to question: rates only
      grid: {tp: 1}                              | g.yaml:1:1: question capacity needs slo
      slo: "ttft_p99=1s"\\npoints: [{tp: 1}, {tp: 1}] | g.yaml:3:19: points[1] repeats points[0] (model=
      slo: "ttft_p99=1s"\\npoints: [{tp: 1}, {scheduler: x}] | g.yaml:3:20: points[1].scheduler: unknown scheduler 'x'
      slo: "ttft_p99=1s"\\npareto_latency: e2e_p98 | g.yaml:3:1: pareto_latency: expected METRIC_STAT
      """)
  void aBadGridIsOneLineNamingTheLineColumnAndKey(String lines, String expected) {
    String text = "question: capacity\n" + lines.replace("\\n", "\n") + "\nworkload: {preset: chatbot}\n";
    assertThatThrownBy(() -> SweepGrid.parse(text, "g.yaml", tmp)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(expected).satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
  }

  @Test
  void theCliExitsWithTwoAndOneLineOnABadGridOrSlo() throws IOException {
    Path bad = tmp.resolve("bad.yaml");
    Files.writeString(bad, "question: capacity\nslo: \"e2e_p99=\"\nworkload: {preset: chatbot}\ngrid: {tp: 1}\n");
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = BlisCli.execute(new String[] {"sweep", "--grid", bad.toString(), "--out", tmp.resolve("o").toString()},
        new PrintWriter(out), new PrintWriter(err));
    assertThat(code).isEqualTo(2);
    assertThat(err.toString()).isEqualTo("blis sweep: " + bad + ":2:1: slo: 'e2e_p99=': expected KEY=VALUE, for example"
        + " ttft_p99=500ms" + System.lineSeparator());
    Files.writeString(bad, "question: rates\nworkload: {preset: chatbot}\ngrid: {tp: 1}\n");
    err.getBuffer().setLength(0);
    code = BlisCli.execute(new String[] {"sweep", "--grid", bad.toString(), "--out", tmp.resolve("o").toString()},
        new PrintWriter(out), new PrintWriter(err));
    assertThat(code).isEqualTo(2);
    assertThat(err.toString()).startsWith("blis sweep: " + bad + ":1:1: question rates needs rates");
    err.getBuffer().setLength(0);
    code = BlisCli.execute(new String[] {"sweep", "--grid", tmp.resolve("none.yaml").toString(), "--out", "o"},
        new PrintWriter(out), new PrintWriter(err));
    assertThat(code).isEqualTo(2);
    assertThat(err.toString()).contains("--grid: no such file");
    err.getBuffer().setLength(0);
    code = BlisCli.execute(new String[] {"sweep", "--grid", bad.toString(), "--out", ""},
        new PrintWriter(out), new PrintWriter(err));
    assertThat(code).isEqualTo(2);
    assertThat(err.toString()).contains("--out needs a directory name, got an empty one");
    // a price for a GPU that is neither bundled nor a GPU file's of the grid: a typo, refused
    Path good = tmp.resolve("good.yaml");
    Files.writeString(good, GRID);
    Path typo = tmp.resolve("typo-prices.yaml");
    Files.writeString(typo, "H100: 2\nH10O: 3\n");
    err.getBuffer().setLength(0);
    code = BlisCli.execute(new String[] {"sweep", "--grid", good.toString(), "--out", tmp.resolve("t").toString(),
        "--prices", typo.toString()}, new PrintWriter(out), new PrintWriter(err));
    assertThat(code).isEqualTo(2);
    assertThat(err.toString()).startsWith("blis sweep: --prices " + typo + ": 'H10O' is not a bundled GPU, and the"
        + " grid names no GPU file whose GPU it could be (a typo? bundled GPUs: ");
    assertThat(tmp.resolve("t")).doesNotExist();
  }

  @Test
  void theCliRunsASweepAndReportsTheBest() throws IOException {
    Path g = tmp.resolve("cli.yaml");
    Files.writeString(g, GRID.replace("tp: [1, 3]", "tp: 3")); // skipped only: nothing to simulate
    Path prices = tmp.resolve("prices.yaml");
    Files.writeString(prices, "H100: 2\n");
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = BlisCli.execute(new String[] {"sweep", "--grid", g.toString(), "--out", tmp.resolve("cli").toString(),
        "--threads", "2", "--prices", prices.toString()}, new PrintWriter(out), new PrintWriter(err));
    assertThat(err.toString()).isEmpty();
    assertThat(code).isZero();
    assertThat(out.toString()).contains("2 configurations (0 from an earlier run, 2 simulated now, 2 skipped)")
        .contains("best: none");
    assertThat(tmp.resolve("cli").resolve(Sweep.CSV)).exists();
    assertThat(tmp.resolve("cli").resolve(Sweep.SUMMARY)).exists();
    // nothing ran: the report says so instead of drawing empty charts
    String html = read(tmp.resolve("cli").resolve(Sweep.REPORT));
    assertThat(ReportPages.specs(html)).isEmpty();
    assertThat(html).contains("Best configuration: none").contains("No load point has a finite latency to draw.");
    assertThat(out.toString()).contains(tmp.resolve("cli").resolve(Sweep.REPORT).toString());
  }
}
