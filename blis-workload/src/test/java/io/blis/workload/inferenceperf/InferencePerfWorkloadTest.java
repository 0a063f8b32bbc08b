package io.blis.workload.inferenceperf;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class InferencePerfWorkloadTest {

  static final InferencePerfProfile CODEGEN = new InferencePerfProfile(
      new SharedPrefixData(10, 10, 100, 466, 247),
      List.of(new LoadStage(5, 600), new LoadStage(10, 600)), 1.0, 300);

  @Test
  void stageBarrierAndPromptCycling() {
    RequestSource src = InferencePerfWorkload.synthetic(CODEGEN, 11);
    List<RequestSpec> stage0 = new ArrayList<>();
    RequestSpec r;
    while ((r = src.next()) != null) {
      stage0.add(r);
    }
    assertThat(stage0).hasSize(3000);
    assertThat(src.exhausted()).isFalse();
    assertThat(stage0.get(0).arrivalTimeUs()).isGreaterThan(1_000_000);
    assertThat(stage0.get(2999).arrivalTimeUs()).isEqualTo(601_000_000);
    for (int n = 100; n < 3000; n++) {
      assertThat(stage0.get(n).promptTokens()).isEqualTo(stage0.get(n - 100).promptTokens());
      assertThat(stage0.get(n).timeoutUs()).isEqualTo(300_000_000L);
      assertThat(stage0.get(n).outputTokens()).isEqualTo(247);
    }
    assertThat(Arrays.equals(stage0.get(0).promptTokens(), stage0.get(1).promptTokens())).isFalse();
    // Finish all but one: still waiting.
    long finish = 0;
    for (int i = 0; i < 2999; i++) {
      finish = stage0.get(i).arrivalTimeUs() + 2_000_000;
      src.onFinished(stage0.get(i), RequestOutcome.COMPLETED, finish);
      assertThat(src.next()).isNull();
    }
    src.onFinished(stage0.get(2999), RequestOutcome.TIMED_OUT, 700_000_000L);
    RequestSpec first1 = src.next();
    assertThat(first1.stage()).isEqualTo(1);
    assertThat(first1.arrivalTimeUs()).isGreaterThan(700_000_000L + 2_000_000L);
    // n restarts at 0 in every stage.
    assertThat(first1.promptTokens()).isEqualTo(stage0.get(0).promptTokens());
    assertThat(first1.id()).isEqualTo(3000);
    // Stage 1 starts at the last finish (700 s) + interval (1 s); sends run from 1 s after that
    // start to exactly 1 s + 600 s after it.
    long stage1StartUs = 700_000_000L + 1_000_000L;
    List<RequestSpec> stage1 = new ArrayList<>(List.of(first1));
    while ((r = src.next()) != null) {
      stage1.add(r);
    }
    assertThat(stage1).hasSize(6000).allSatisfy(x -> assertThat(x.arrivalTimeUs())
        .isBetween(stage1StartUs + 1_000_000L, stage1StartUs + 601_000_000L));
    assertThat(stage1.get(5999).arrivalTimeUs()).isEqualTo(stage1StartUs + 601_000_000L);
    assertThat(src.exhausted()).isFalse();
    for (RequestSpec x : stage1) {
      src.onFinished(x, RequestOutcome.COMPLETED, x.arrivalTimeUs() + 1);
    }
    assertThat(src.next()).isNull();
    assertThat(src.exhausted()).isTrue();
  }

  @Test
  void sameSeedSameStreamAndPromptSharing() {
    var a = io.blis.workload.TestSupport.drain(InferencePerfWorkload.synthetic(CODEGEN, 4));
    var b = io.blis.workload.TestSupport.drain(InferencePerfWorkload.synthetic(CODEGEN, 4));
    var c = io.blis.workload.TestSupport.drain(InferencePerfWorkload.synthetic(CODEGEN, 5));
    assertThat(a).isEqualTo(b).isNotEqualTo(c);
    // 100 distinct prompts in 10 groups of 10; prompts of a group share exactly their prefix.
    java.util.Map<String, java.util.Set<String>> byGroup = new java.util.TreeMap<>();
    for (RequestSpec r : a.subList(0, 100)) {
      byGroup.computeIfAbsent(r.prefixGroup(), g -> new java.util.HashSet<>())
          .add(Arrays.toString(r.promptTokens()));
      for (RequestSpec o : a.subList(0, 100)) {
        int common = 0;
        while (common < Math.min(r.inputTokens(), o.inputTokens())
            && r.promptTokens()[common] == o.promptTokens()[common]) {
          common++;
        }
        if (r == o) {
          continue;
        }
        if (o.prefixGroup().equals(r.prefixGroup())) {
          assertThat(common).isEqualTo(r.prefixLength());
        } else {
          assertThat(common).isZero();
        }
      }
    }
    assertThat(byGroup).hasSize(10).allSatisfy((g, prompts) -> assertThat(prompts).hasSize(10));
  }

  @Test
  void largePromptSetsAreRebuiltNotCachedButStayIdentical() {
    InferencePerfProfile big = new InferencePerfProfile(
        new SharedPrefixData(100, 100, 200, 3800, 10), List.of(new LoadStage(10_001, 1)), 1, 0);
    RequestSource src = InferencePerfWorkload.synthetic(big, 2);
    RequestSpec first = src.next();
    RequestSpec r = first;
    for (int i = 1; i <= 10_000; i++) {
      r = src.next();
    }
    assertThat(r.promptTokens()).isNotSameAs(first.promptTokens()).isEqualTo(first.promptTokens());
  }
}
