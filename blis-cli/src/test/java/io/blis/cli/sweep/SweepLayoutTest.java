package io.blis.cli.sweep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.engine.capacity.CapacitySearch;
import io.blis.engine.cluster.Cluster;
import io.blis.engine.cluster.PolicySpec;
import io.blis.engine.cluster.PoolSpec;
import io.blis.engine.validate.Ensemble;
import io.blis.engine.validate.Extrapolation;
import io.blis.latency.layout.Layout;
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

/** Pipeline, data and expert parallelism in sweep grids: axes, keys, GPUs and costs, and each row's search. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SweepLayoutTest {

  /** Mixtral (an MoE model, so that expert parallelism applies) at TP 2, one and two data-parallel ranks, EP off and on. */
  private static final String GRID = """
      question: capacity
      slo: "ttft_p99=500ms,e2e_p99=20s"
      workload: {preset: chatbot, seed: 5}
      grid:
        model: mixtral-8x7b
        tp: 2
        dp: [1, 2]
        expert_parallel: [false, true]
        max_num_seqs: 64
      search: {point_duration_s: 20, min_requests: 60, max_requests: 600, tolerance: 0.25, start_rps: 2,
               max_rps: 64, saturation: false}
      """;

  @TempDir Path tmp;

  private SweepGrid grid;
  private SweepTable table;

  @BeforeAll
  void runTheGrid(@TempDir Path dir) {
    grid = SweepGrid.parse(GRID, "layout.yaml", dir);
    table = Sweep.of(grid).threads(1).prices(PriceTable.parse("H100: 2.5", "p.yaml", false)).run(dir.resolve("out"))
        .table();
  }

  @Test
  void theAxesExpandInGridOrderAndOnlyNonDefaultLayoutsChangeTheKey() {
    assertThat(grid.configs()).extracting(c -> c.tp() + "/" + c.pp() + "/" + c.dp() + "/" + c.expertParallel())
        .containsExactly("2/1/1/false", "2/1/1/true", "2/1/2/false", "2/1/2/true");
    assertThat(grid.configs()).extracting(SweepConfig::key).containsExactly(
        "model=mixtral-8x7b;gpu=H100;tp=2;replicas=1;max_num_seqs=64;max_num_batched_tokens=2048;router=round-robin;scheduler=fcfs",
        "model=mixtral-8x7b;gpu=H100;tp=2;expert_parallel=true;replicas=1;max_num_seqs=64;max_num_batched_tokens=2048;router=round-robin;scheduler=fcfs",
        "model=mixtral-8x7b;gpu=H100;tp=2;dp=2;replicas=1;max_num_seqs=64;max_num_batched_tokens=2048;router=round-robin;scheduler=fcfs",
        "model=mixtral-8x7b;gpu=H100;tp=2;dp=2;expert_parallel=true;replicas=1;max_num_seqs=64;max_num_batched_tokens=2048;router=round-robin;scheduler=fcfs");
    // the old constructor is tensor parallelism only, with the key it always had
    SweepConfig old = new SweepConfig("llama-2-7b", "H100", 4, 2, 256, 2048, "round-robin", "fcfs");
    assertThat(old).isEqualTo(new SweepConfig("llama-2-7b", "H100", 4, 1, 1, false, 2, 256, 2048, "round-robin", "fcfs"));
    assertThat(old.key()).isEqualTo(
        "model=llama-2-7b;gpu=H100;tp=4;replicas=2;max_num_seqs=256;max_num_batched_tokens=2048;router=round-robin;scheduler=fcfs");
    assertThat(new SweepConfig("m", "g", 2, 3, 1, false, 1, 1, 1, "r", "s").key()).contains(";tp=2;pp=3;replicas=1;");
    // points take the same keys; pp x the grid axes
    SweepGrid g = SweepGrid.parse("""
        question: capacity
        slo: "e2e_p99=20s"
        workload: {preset: chatbot}
        grid: {model: mixtral-8x7b, tp: [1, 2], pp: [1, 2], dp: [1, 2], expert_parallel: [false, true], replicas: [1, 2]}
        points:
          - {model: mixtral-8x7b, tp: 4, pp: 2, dp: 2, expert_parallel: true}
        """, "g.yaml", tmp);
    assertThat(g.configs()).hasSize(2 * 2 * 2 * 2 * 2 + 1);
    assertThat(g.configs().get(g.configs().size() - 1).key()).contains(";tp=4;pp=2;dp=2;expert_parallel=true;replicas=1;");
    assertThat(g.configs().get(g.configs().size() - 1).ep()).isEqualTo(8);
  }

  @Test
  void gpusAreTpTimesPpTimesDpTimesReplicasAndCostsFollow() {
    assertThat(table.columns().subList(0, 10))
        .containsExactly("index", "key", "model", "gpu", "tp", "pp", "dp", "ep", "replicas", "gpus");
    assertThat(table.csv()).startsWith("index,key,model,gpu,tp,pp,dp,ep,replicas,gpus,max_num_seqs,");
    List<ObjectNode> rows = table.rows();
    assertThat(rows).extracting(r -> r.get("status").asText()).containsOnly("ok");
    assertThat(rows).extracting(r -> r.get("pp").asInt() + "/" + r.get("dp").asInt() + "/" + r.get("ep").asInt())
        .containsExactly("1/1/1", "1/1/2", "1/2/1", "1/2/4");
    assertThat(rows).extracting(r -> r.get("gpus").asInt()).containsExactly(2, 2, 4, 4);
    for (ObjectNode r : rows) {
      double perHour = r.get("gpus").asInt() * 2.5;
      assertThat(r.get("cost_per_hour_usd").asDouble()).isEqualTo(perHour);
      assertThat(r.get("rps_per_usd_hour").asDouble()).isCloseTo(r.get("capacity_rps").asDouble() / perHour,
          within(1e-5 * r.get("rps_per_usd_hour").asDouble()));
    }
    // the hand-built case: 2 replicas of TP 4 x PP 2 x DP 2 on H100 at 2 USD = 32 GPUs, 64 USD/h
    SweepGrid g = SweepGrid.parse("""
        question: capacity
        slo: "e2e_p99=20s"
        workload: {preset: chatbot}
        points: [{model: mixtral-8x7b, tp: 4, pp: 2, dp: 2, replicas: 2}]
        """, "hand.yaml", tmp);
    ObjectNode rec = new ObjectMapper().createObjectNode();
    rec.put("key", g.configs().get(0).key());
    rec.put("status", "ok");
    rec.put("gpu_name", "H100");
    rec.putObject("capacity").put("rate_rps", 16).put("lower_bound", false).put("points_simulated", 1);
    ObjectNode row = SweepTable.of(g, PriceTable.parse("H100: 2", "p.yaml", false), List.of(rec)).rows().get(0);
    assertThat(row.get("gpus").asInt()).isEqualTo(32);
    assertThat(row.get("cost_per_hour_usd").decimalValue()).isEqualByComparingTo("64");
    assertThat(row.get("rps_per_usd_hour").decimalValue()).isEqualByComparingTo("0.25");
  }

  @Test
  void eachRowEqualsItsCapacitySearchOnTheLayoutBuiltByHand() {
    List<Double> firstPointE2e = new ArrayList<>();
    for (int i = 0; i < grid.configs().size(); i++) {
      SweepConfig c = grid.configs().get(i);
      ObjectNode row = table.rows().get(i);
      int dp = c.dp();
      // as blis run --model mixtral-8x7b --tp 2 --dp D [--ep 2D] --max-num-seqs 64 builds it
      PoolSpec pool = new PoolSpec("default", 1, "mixtral-8x7b", "H100", 2, "trained-physics", null, 64, 2048, 0, null,
          16, null, 0.9, 1, dp, c.expertParallel() ? 2 * dp : 1);
      CapacitySearch.DeploymentFactory f = (n, coeffs) -> Cluster.builder().defaults(pool).instances(n == 0 ? 1 : n)
          .router(new PolicySpec("round-robin", Map.of())).scheduler("fcfs").toSimulation();
      CapacitySearch.Found max = new CapacitySearch(f, grid.workload(), grid.slo(), grid.settings()).maxRate(null);
      assertThat(row.get("capacity_rps").asDouble()).as(c.key()).isEqualTo(max.rateRps());
      assertThat(row.get("points_simulated").asInt()).isEqualTo(max.points().size());
      assertThat(row.get("completed").asInt()).isEqualTo(max.at().metrics().completed());
      assertThat(row.get("e2e_p99_ms").asDouble()).isCloseTo(max.at().metrics().value("e2e_p99") / 1000,
          within(1e-5 * row.get("e2e_p99_ms").asDouble()));
      firstPointE2e.add(table.records().get(i).at("/capacity/points/0/e2e_p99_ms").asDouble());
      // the layout intervals would see: the configuration's, a layout extrapolation beyond TP alone
      var pd = grid.deployment().resolved(c);
      assertThat(pd.layout()).isEqualTo(new Layout(2, 1, dp, c.expertParallel() ? 2 * dp : 1));
      assertThat(Ensemble.bundled().distances(pd.model(), pd.gpu(), pd.layout())).extracting(Extrapolation::kind)
          .as(c.key()).matches(k -> k.contains(Extrapolation.Kind.LAYOUT) == (c.dp() > 1 || c.expertParallel()));
    }
    // every layout is simulated as itself: the same first rate, four different tails
    assertThat(firstPointE2e).doesNotHaveDuplicates();
  }

  @Test
  void labelsAddPpDpAndEpWhereTheyAreNotOne() {
    assertThat(SweepReport.labels(grid.configs()).values())
        .containsExactly("#0 tp=2", "#1 tp=2 ep=2", "#2 tp=2 dp=2", "#3 tp=2 dp=2 ep=4");
    assertThat(SweepReport.layout(new SweepConfig("m", "g", 4, 2, 1, false, 1, 1, 1, "r", "s"))).isEqualTo("tp=4 pp=2");
  }

  @Test
  void aLayoutVllmRefusesIsASkippedRowWithOneLineNamingTheConfiguration() {
    SweepGrid g = SweepGrid.parse("""
        question: capacity
        slo: "e2e_p99=20s"
        workload: {preset: chatbot}
        points:
          - {model: llama-2-7b, tp: 2, expert_parallel: true}
          - {model: llama-2-7b, pp: 64}
          - {model: mixtral-8x7b, tp: 2, dp: 3, expert_parallel: true}
        """, "refused.yaml", tmp);
    List<String> progress = new ArrayList<>();
    SweepTable t = Sweep.of(g).threads(1).progress(progress::add).run(tmp.resolve("refused")).table();
    assertThat(t.rows()).extracting(r -> r.get("status").asText()).containsOnly("skipped");
    List<String> reasons = t.rows().stream().map(r -> r.get("reason").asText()).toList();
    assertThat(reasons.get(0)).isEqualTo("meta-llama/Llama-2-7b-hf: expert parallelism needs a mixture-of-experts model;"
        + " this one is dense");
    assertThat(reasons.get(1)).isEqualTo("meta-llama/Llama-2-7b-hf: pipeline parallelism 64 exceeds the 32 layers"
        + " (every stage needs at least one)");
    assertThat(reasons.get(2)).contains("8 routed experts cannot be spread evenly over expert parallelism 6");
    assertThat(reasons).allMatch(r -> !r.contains("\n"));
    // the progress line names the configuration and the reason
    for (int i = 0; i < 3; i++) {
      String key = g.configs().get(i).key();
      String reason = reasons.get(i);
      assertThat(progress).anyMatch(l -> l.contains(key + ": skipped: " + reason));
    }
    assertThat(t.rows()).extracting(r -> r.get("gpus").asInt()).containsExactly(2, 64, 6);
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
      grid: {pp: [1, 0]}                     | g.yaml:4:16: grid.pp[1]: must be a whole number of at least 1, got 0
      grid: {dp: [2, 2]}                     | g.yaml:4:16: grid.dp lists 2 twice
      grid: {expert_parallel: [maybe]}       | g.yaml:4:26: at 'grid.expert_parallel[0]': expected true or false, got the text 'maybe'
      grid: {expert_parallel: [false, false]} | g.yaml:4:33: grid.expert_parallel lists false twice
      points: [{dp: 0}]                      | g.yaml:4:11: points[0].dp: must be a whole number of at least 1, got 0
      points: [{pp: 2}, {pp: 2}]              | g.yaml:4:19: points[1] repeats points[0] (model=meta-llama/Llama-2-7b-hf;gpu=H100;tp=1;pp=2;replicas=1;
      """)
  void aBadLayoutValueIsOneLineNamingTheLineColumnAndKey(String line, String expected) {
    String text = "question: capacity\nslo: \"e2e_p99=20s\"\nworkload: {preset: chatbot}\n" + line + "\n";
    assertThatThrownBy(() -> SweepGrid.parse(text, "g.yaml", tmp)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(expected).satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
  }

  @Test
  void recordsOfTheGridReadBackGiveTheSameTable() {
    List<String> lines = new ArrayList<>();
    for (JsonNode r : table.records()) {
      lines.add(Sweep.line(r));
    }
    SweepTable again = Sweep.table(grid, PriceTable.parse("H100: 2.5", "p.yaml", false), lines);
    assertThat(again.csv()).isEqualTo(table.csv());
  }
}
