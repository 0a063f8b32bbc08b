package io.blis.workload.inferenceperf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.TestSupport;
import io.blis.workload.trace.GroundTruthTrace;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class GroundTruthReplayTest {

  static final String CODEGEN = "20260217-155451-llama-2-7b-tp1-codegen";
  static final String REASONING = "20260217-170634-llama-2-7b-tp1-reasoning";
  static Path gt;

  @BeforeAll
  static void locate() {
    gt = TestSupport.groundTruth();
    assumeTrue(gt != null, "shared/groundtruth not found above the working directory");
  }

  private static Path trace(String id) {
    return gt.resolve("requests").resolve(id + ".csv.gz");
  }

  private static InferencePerfProfile profile(String id) {
    return InferencePerfProfiles.fromExperiments(gt.resolve("experiments.json"), id);
  }

  @Test
  void rowsLoadWithTheRightCounts() {
    List<GroundTruthTrace.Row> rows = GroundTruthTrace.read(trace(CODEGEN));
    assertThat(rows).hasSize(9000);
    assertThat(rows.stream().filter(r -> r.stage() == 0).count()).isEqualTo(3000);
    assertThat(rows.stream().allMatch(GroundTruthTrace.Row::ok)).isTrue();
    double meanInput = rows.stream().mapToInt(GroundTruthTrace.Row::inputTokens).average().orElseThrow();
    assertThat(meanInput).isCloseTo(591.63, org.assertj.core.data.Offset.offset(0.01));
    List<GroundTruthTrace.Row> reasoning = GroundTruthTrace.read(trace(REASONING));
    assertThat(reasoning).hasSize(4800);
    long failed = reasoning.stream().filter(r -> !r.ok()).count();
    assertThat(failed).isEqualTo(4068);
    assertThat(reasoning.stream().filter(r -> !r.ok()).allMatch(r -> r.inputTokens() == -1 && Double.isNaN(r.ttftMs())))
        .isTrue();
  }

  @Test
  void everyGroundTruthRunReplays() throws Exception {
    var root = new com.fasterxml.jackson.databind.ObjectMapper().readTree(gt.resolve("experiments.json").toFile());
    int runs = 0;
    for (var e : root.path("experiments")) {
      String id = e.path("id").asText();
      InferencePerfProfile p = profile(id);
      long n = 0;
      long last = -1;
      try (RequestSource src = InferencePerfWorkload.replay(p, trace(id), 7)) {
        RequestSpec r;
        while ((r = src.next()) != null) {
          assertThat(r.arrivalTimeUs()).isGreaterThanOrEqualTo(last);
          assertThat(r.outputTokens()).isEqualTo(p.data().outputLen());
          last = r.arrivalTimeUs();
          n++;
        }
      }
      assertThat(n).as(id).isEqualTo(e.path("workload").path("total_requests").asLong());
      runs++;
    }
    assertThat(runs).isEqualTo(12);
  }

  @Test
  void replayKeepsTimesLengthsAndPromptIdentity() {
    InferencePerfProfile p = profile(CODEGEN);
    List<GroundTruthTrace.Row> rows = GroundTruthTrace.read(trace(CODEGEN));
    List<RequestSpec> rs;
    try (RequestSource src = InferencePerfWorkload.replay(p, trace(CODEGEN), 1)) {
      rs = TestSupport.drain(src);
    }
    assertThat(rs).hasSize(9000);
    Map<Integer, int[]> byLength = new HashMap<>();
    int identical = 0;
    for (int i = 0; i < rs.size(); i++) {
      RequestSpec r = rs.get(i);
      GroundTruthTrace.Row row = rows.get(i);
      assertThat(r.arrivalTimeUs()).isEqualTo(Math.round(row.arrivalMs() * 1000));
      assertThat(r.inputTokens()).isEqualTo(row.inputTokens());
      assertThat(r.outputTokens()).isEqualTo(247);
      assertThat(r.stage()).isEqualTo(row.stage());
      assertThat(r.timeoutUs()).isEqualTo(300_000_000L);
      // BOS + about 104 system tokens (100 x 1.044 plus a per-group jitter).
      assertThat(r.prefixLength()).isBetween(95, 115);
      // Rows n and n+100 of a stage with the same length are the same prompt: identical ids.
      int n = (int) (row.stage() == 0 ? i : i - 3000);
      if (n >= 100) {
        RequestSpec prev = rs.get(i - 100);
        if (prev.inputTokens() == r.inputTokens()) {
          assertThat(r.promptTokens()).isEqualTo(prev.promptTokens());
          identical++;
        }
      }
    }
    assertThat(identical).isGreaterThan(8500);
    // Ten groups: prompts of a group share their prefix tokens.
    Map<String, int[]> prefixes = new HashMap<>();
    for (RequestSpec r : rs) {
      int[] prefix = java.util.Arrays.copyOf(r.promptTokens(), r.prefixLength());
      int[] seen = prefixes.putIfAbsent(r.prefixGroup(), prefix);
      if (seen != null) {
        assertThat(prefix).isEqualTo(seen);
      }
    }
    assertThat(prefixes).hasSize(10);
  }

  @Test
  void mismatchesOfTheCycleAreNeighbourSwaps() {
    // Rows n and n+N of a stage carry the same prompt length in >= 96 % of cases; the rows that
    // differ have the usual length of identity n-1 or n+1 (adjacent requests sent out of order).
    for (String id : List.of(CODEGEN, "20260217-231439-llama-2-7b-tp1-general")) {
      List<GroundTruthTrace.Row> rows = GroundTruthTrace.read(trace(id));
      int n = 100;
      Map<Integer, Map<Integer, Integer>> counts = new HashMap<>();
      int[] index = new int[rows.size()];
      int stage = -1;
      int k = 0;
      for (int i = 0; i < rows.size(); i++) {
        if (rows.get(i).stage() != stage) {
          stage = rows.get(i).stage();
          k = 0;
        }
        index[i] = k++ % n;
        counts.computeIfAbsent(index[i], x -> new HashMap<>()).merge(rows.get(i).inputTokens(), 1, Integer::sum);
      }
      int[] usual = new int[n];
      counts.forEach((p, c) -> usual[p] = c.entrySet().stream()
          .max(Map.Entry.<Integer, Integer>comparingByValue().thenComparing(Map.Entry.comparingByKey(java.util.Comparator.reverseOrder())))
          .orElseThrow().getKey());
      int mismatched = 0;
      int swaps = 0;
      for (int i = 0; i < rows.size(); i++) {
        int len = rows.get(i).inputTokens();
        if (len != usual[index[i]]) {
          mismatched++;
          if (len == usual[(index[i] + 1) % n] || len == usual[(index[i] + n - 1) % n]) {
            swaps++;
          }
        }
      }
      assertThat((double) mismatched / rows.size()).as(id).isLessThan(0.04);
      assertThat((double) swaps / mismatched).as(id).isGreaterThan(0.95);
    }
  }

  @Test
  void failedRowsGetTheirPromptsUsualLength() {
    InferencePerfProfile p = profile(REASONING);
    List<GroundTruthTrace.Row> rows = GroundTruthTrace.read(trace(REASONING));
    List<RequestSpec> rs;
    try (RequestSource src = InferencePerfWorkload.replay(p, trace(REASONING), 1)) {
      rs = TestSupport.drain(src);
    }
    assertThat(rs).hasSize(4800);
    for (int i = 0; i < rs.size(); i++) {
      if (!rows.get(i).ok()) {
        // Same prompt identity as a successful row 100k away, hence its length.
        assertThat(rs.get(i).inputTokens()).isBetween(1000, 1150);
      }
    }
    assertThat(rs.get(4799).outputTokens()).isEqualTo(1448);
  }

  @Test
  void syntheticMatchesTheMeasuredPromptLengthAndCount() {
    Path experiments = gt.resolve("experiments.json");
    for (String id : List.of(CODEGEN, REASONING, "20260217-162547-llama-2-7b-tp1-roleplay")) {
      InferencePerfProfile p = profile(id);
      double measured = GroundTruthTrace.read(trace(id)).stream()
          .filter(GroundTruthTrace.Row::ok).mapToInt(GroundTruthTrace.Row::inputTokens).average()
          .orElseThrow();
      RequestSource src = InferencePerfWorkload.synthetic(p, 3);
      List<RequestSpec> first = TestSupport.drain(src);
      assertThat(first).hasSize(p.stages().get(0).numRequests());
      double mean = first.stream().mapToInt(RequestSpec::inputTokens).average().orElseThrow();
      assertThat(mean).as(id).isCloseTo(measured, org.assertj.core.data.Percentage.withPercentage(2));
      assertThat(experiments).exists();
    }
  }
}
