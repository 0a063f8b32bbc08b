package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code blis day}: every point of a plan simulated as {@code blis run} would, the table, the frontier and the report. */
class DayCommandTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  /** AutoscaleCliTest's burst (2 req/s, 30 more from 300 s to 900 s), every client of class standard. */
  private static final String SPEC = AutoscaleCliTest.SPEC;

  private static final String SLO = "slo:\n  standard: {ttft_ms: 500, e2e_ms: 10000}\n";

  /** The shared flags of the plans below (the spec and the SLO written into {@code dir}). */
  private static String base(Path dir) throws Exception {
    Files.writeString(dir.resolve("spec.yaml"), SPEC);
    Files.writeString(dir.resolve("slo.yaml"), SLO);
    return "--model llama-3.1-8b --workload-spec " + dir.resolve("spec.yaml") + " --policy-config "
        + dir.resolve("slo.yaml") + " --max-replicas 6 --gpus-per-node 1 --node-cost-per-hour 2"
        + " --provisioning-delay-s 60 --loading-delay-s 20 --warmup-s 10 --scale-down-window-s 60"
        + " --autoscaler hpa --autoscaler-option metric=waiting --autoscaler-option target=2";
  }

  private static Path plan(Path dir, String text) throws Exception {
    Path p = dir.resolve("plan.yaml");
    Files.writeString(p, text);
    return p;
  }

  private static BlisCliTest.Outcome day(Path plan, Path out, String... extra) {
    List<String> args = new ArrayList<>(List.of("day", "--plan", plan.toString(), "--out", out.toString()));
    args.addAll(List.of(extra));
    return blis(args.toArray(String[]::new));
  }

  @Test
  void eachPointIsTheRunOfItsFlagsAndTheTableRanksThem(@TempDir Path dir) throws Exception {
    Path plan = plan(dir, "run: " + base(dir) + "\n"
        + "attainment_target: 0.9\n"
        + "grid:\n  --autoscaler-option: [target=1, target=8]\n"
        + "points:\n  - {name: fixed 4, flags: --autoscaler schedule --autoscaler-option replicas=0:4}\n");
    BlisCliTest.Outcome o = day(plan, dir.resolve("out"), "--threads", "2");
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(o.out()).contains("3 points, 2 at a time").contains("#0 autoscaler-option target=1")
        .contains("wrote ");

    // point 1 is blis run with the shared flags, target=8 in place of target=2: the same result bytes
    List<String> runArgs = new ArrayList<>(List.of("run"));
    runArgs.addAll(List.of(base(dir).replace("target=2", "target=8").split(" ")));
    BlisCliTest.Outcome run = blis(runArgs.toArray(String[]::new));
    assertThat(run.code()).as(run.err()).isZero();
    assertThat(Files.readString(dir.resolve("out/results/point-1.json")).strip()).isEqualTo(run.out().strip());
    // the schedule point ran with its own scaler and none of the shared scaler's options
    JsonNode fixed = JSON.readTree(dir.resolve("out/results/point-2.json").toFile());
    assertThat(fixed.path("autoscaling").path("autoscaler").asText()).isEqualTo("schedule");

    JsonNode s = JSON.readTree(dir.resolve("out/summary.json").toFile());
    JsonNode points = s.path("points");
    assertThat(points).hasSize(3);
    for (int i = 0; i < 3; i++) {
      JsonNode p = points.get(i);
      JsonNode a = JSON.readTree(dir.resolve("out/results/point-" + i + ".json").toFile()).path("autoscaling");
      // the row is the run's autoscaling section: cost (2 USD a one-GPU node-hour) and attainment
      assertThat(p.path("cost_usd").asDouble()).isCloseTo(a.path("cost").asDouble(),
          org.assertj.core.data.Offset.offset(0.005));
      assertThat(p.path("cost_usd").asDouble()).isCloseTo(2 * p.path("node_hours").asDouble(),
          org.assertj.core.data.Offset.offset(0.01));
      assertThat(p.path("attainment").asDouble()).isCloseTo(a.path("slo_attainment").asDouble(),
          org.assertj.core.data.Offset.offset(1e-6));
      assertThat(p.path("timeline").size()).isEqualTo(a.path("timeline").size());
      assertThat(p.path("example_price").asBoolean()).isFalse();
    }
    // the frontier: by cost, each point attaining more than every cheaper one
    List<double[]> costAttainment = new ArrayList<>();
    points.forEach(p -> costAttainment.add(new double[] {p.path("cost_usd").asDouble(), p.path("attainment").asDouble()}));
    for (int i = 0; i < 3; i++) {
      boolean dominated = false;
      for (int j = 0; j < 3; j++) {
        double[] a = costAttainment.get(i);
        double[] b = costAttainment.get(j);
        dominated |= j != i && b[0] <= a[0] && b[1] >= a[1] && (b[0] < a[0] || b[1] > a[1] || j < i);
      }
      assertThat(points.get(i).path("frontier").asBoolean()).as("point %d", i).isEqualTo(!dominated);
    }
    // the best: the cheapest of those attaining 90%
    int best = -1;
    for (int i = 0; i < 3; i++) {
      double[] c = costAttainment.get(i);
      if (c[1] >= 0.9 && (best < 0 || c[0] < costAttainment.get(best)[0])) {
        best = i;
      }
    }
    assertThat(s.path("best").isNull() ? -1 : s.path("best").asInt()).isEqualTo(best);

    String csv = Files.readString(dir.resolve("out/day.csv"));
    assertThat(csv.lines().count()).isEqualTo(4);
    assertThat(csv.lines().findFirst().orElseThrow()).startsWith("index,label,scaler,peak_replicas");
    String html = Files.readString(dir.resolve("out/report.html"));
    assertThat(html).contains("Cost against SLO attainment").contains("Ready replicas over the day")
        .contains("#2 fixed 4");

    // one thread or two, the same bytes
    BlisCliTest.Outcome again = day(plan, dir.resolve("again"), "--threads", "1", "--quiet");
    assertThat(again.code()).as(again.err()).isZero();
    for (String f : List.of("day.csv", "summary.json", "report.html", "results/point-0.json")) {
      assertThat(Files.readString(dir.resolve("again").resolve(f))).as(f)
          .isEqualTo(Files.readString(dir.resolve("out").resolve(f)));
    }

    // run again into the same directory: every point comes from the earlier run, the same bytes
    String csvBefore = Files.readString(dir.resolve("out/day.csv"));
    String reportBefore = Files.readString(dir.resolve("out/report.html"));
    BlisCliTest.Outcome resumed = day(plan, dir.resolve("out"));
    assertThat(resumed.code()).as(resumed.err()).isZero();
    assertThat(resumed.out()).contains("3 points (3 from an earlier run)").contains("(from an earlier run)");
    assertThat(Files.readString(dir.resolve("out/day.csv"))).isEqualTo(csvBefore);
    assertThat(Files.readString(dir.resolve("out/report.html"))).isEqualTo(reportBefore);
    // an edited workload spec is another run: every point is simulated again
    Files.writeString(dir.resolve("spec.yaml"), SPEC.replace("seed: 5", "seed: 6"));
    BlisCliTest.Outcome edited = day(plan, dir.resolve("out"), "--threads", "2");
    assertThat(edited.code()).as(edited.err()).isZero();
    assertThat(edited.out()).contains("3 points (0 from an earlier run)");
    assertThat(Files.readString(dir.resolve("out/day.csv"))).isNotEqualTo(csvBefore);
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "points: []|a day plan needs points",
      "grid: {--autoscaler-option: [target=8]}\\npoints: [{flags: --min-replicas 2}]|points[0]: a listed point needs a name",
      "grid: {min-replicas: [1]}|grid.min-replicas: a grid key is a blis run flag",
      "grid: {--min-replicas: []}|grid.--min-replicas: needs a list of values",
      "grid: {--flow-control: [true]}|--flow-control takes no value",
      "grid: {--min-replicas: [{a: 1}]}|expected a flag's argument (a string or a number), got a mapping",
      "attainment_target: 1.5\\ngrid: {--min-replicas: [1]}|attainment_target must be in (0, 1], got 1.5",
      "grid: {--min-replicas: [0]}|point #0 (min-replicas 0): ",
      "grid: {--autoscaler-option: [tagret=3]}|point #0 (autoscaler-option tagret=3): hpa: unknown parameter 'tagret'",
      "grid: {--no-such-flag: [1]}|point #0 (no-such-flag 1): Unknown options: '--no-such-flag'",
      "points: [{name: x, flags: --trace-out t.csv}]|point #0 (x): --trace-out does not apply to a day plan's point",
      "points: [{name: x, flags: --autoscaler-option target=3}]\\nnote: 1|unknown key 'note'",
  })
  void aBadPlanIsOneLineNamingThePlaceAndNothingRuns(String extra, String expected, @TempDir Path dir)
      throws Exception {
    Path plan = plan(dir, "run: " + base(dir) + "\n" + extra.replace("\\n", "\n") + "\n");
    BlisCliTest.Outcome o = day(plan, dir.resolve("out"));
    assertThat(o.code()).isEqualTo(2);
    assertThat(o.err()).contains(expected).doesNotContain("\tat ").hasLineCount(1);
    assertThat(o.out()).doesNotContain("points, ");
  }

  @Test
  void aPointWithoutAScalerIsRefusedWithTheFixedFleetSpelledOut(@TempDir Path dir) throws Exception {
    base(dir);
    Path plan = plan(dir, "run: --model llama-3.1-8b --workload-spec " + dir.resolve("spec.yaml") + "\n"
        + "grid: {--num-instances: [1, 2]}\n");
    BlisCliTest.Outcome o = day(plan, dir.resolve("out"));
    assertThat(o.code()).isEqualTo(2);
    assertThat(o.err()).contains("point #0 (num-instances 1): no --autoscaler")
        .contains("--autoscaler schedule --autoscaler-option replicas=0:N");
  }
}
