package io.blis.engine.validate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.engine.result.RequestRecord;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class FirstPerStageSourceTest {

  private static RequestSpec req(long id, int stage, long arrivalUs) {
    return new RequestSpec(id, arrivalUs, new int[] {1, 2, 3}, 5, "standard", "", "", 0, -1, 0, 0, stage);
  }

  @Test
  void keepsTheFirstRequestsOfEachStageAndReportsDroppedOnesFinished() {
    List<RequestSpec> all = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      all.add(req(i, 0, i * 10L));
    }
    for (int i = 5; i < 9; i++) {
      all.add(req(i, 1, 1000 + i * 10L));
    }
    List<Long> finished = new ArrayList<>();
    RequestSource inner = new RequestSource() {
      int next;

      @Override
      public RequestSpec next() {
        return next < all.size() ? all.get(next++) : null;
      }

      @Override
      public List<RequestSpec> onFinished(RequestSpec r, RequestOutcome o, long t) {
        assertThat(t).isGreaterThanOrEqualTo(r.arrivalTimeUs());
        finished.add(r.id());
        return List.of();
      }
    };
    FirstPerStageSource src = new FirstPerStageSource(inner, 2);
    List<Long> kept = new ArrayList<>();
    for (RequestSpec r = src.next(); r != null; r = src.next()) {
      kept.add(r.id());
    }
    assertThat(kept).containsExactly(0L, 1L, 5L, 6L);
    assertThat(finished).containsExactly(2L, 3L, 4L, 7L, 8L);
    assertThat(src.exhausted()).isTrue();
    assertThatThrownBy(() -> new FirstPerStageSource(inner, 0)).hasMessageContaining("at least 1");
  }

  @Test
  void summarizeFirstUsesTheSameRequestsPerStage() {
    List<RequestRecord> records = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      records.add(TraceFixtures.completed(i, i < 10 ? 0 : 1, i * 1000L, 1000, (i + 1) * 10_000L));
    }
    // limit 8: the first 8 of each stage, without the first 8 / 4 = 2 (warm-up)
    RunSummary s = RunStatsCalculator.summarizeFirst(records, 8, 11);
    assertThat(s.overall().countSuccess()).isEqualTo(12);
    // stage 0 keeps ids 2..7 (30..80 ms), stage 1 keeps 12..17 (130..180 ms)
    assertThat(s.stages().get(0).e2eMeanMs()).isEqualTo(55.0);
    assertThat(s.stages().get(1).e2eMeanMs()).isEqualTo(155.0);
    assertThat(RunStatsCalculator.summarizeFirst(records, 0, 11).overall().countSuccess()).isEqualTo(20);
  }

  /**
   * A stage shorter than the limit leaves out a quarter of its own requests, never all of them:
   * stages of 100 requests under a limit of 400 (whose warm-up is 100) keep 75 each.
   */
  @Test
  void aShortStageKeepsThreeQuartersOfItsRequests() {
    List<RequestRecord> records = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      records.add(TraceFixtures.completed(i, i / 100, i * 1000L, 1000, 10_000L));
    }
    RunSummary s = RunStatsCalculator.summarizeFirst(records, 400, 11);
    assertThat(s.stages()).hasSize(3).allSatisfy(st -> assertThat(st.countSuccess()).isEqualTo(75));
    // a stage as long as the limit still leaves out the whole warm-up of 100
    List<RequestRecord> longer = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      longer.add(TraceFixtures.completed(i, 0, i * 1000L, 1000, 10_000L));
    }
    assertThat(RunStatsCalculator.summarizeFirst(longer, 400, 11).overall().countSuccess()).isEqualTo(300);
  }
}
