package io.blis.workload.inferenceperf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** inference-perf's synthetic and random data types, its older {@code api: completion}, and refusals. */
class DataTypesTest {

  static final String SYNTHETIC = """
      api: completion
      data:
        type: synthetic
        input_distribution: {min: 20, max: 800, mean: 300, std: 120, total_count: 40}
        output_distribution: {min: 10, max: 200, mean: 80, std_dev: 30, total_count: 40}
      load:
        type: constant
        stages:
          - {rate: 10, duration: 10}
      """;

  /** Every request of the stream, each finished (completed) as soon as it is pulled. */
  static List<RequestSpec> drain(RequestSource s) {
    List<RequestSpec> out = new ArrayList<>();
    while (true) {
      RequestSpec r = s.next();
      if (r == null) {
        if (s.exhausted()) {
          return out;
        }
        throw new AssertionError("source waits with nothing in flight");
      }
      out.add(r);
      s.onFinished(r, RequestOutcome.COMPLETED, r.arrivalTimeUs() + 1);
    }
  }

  @Test
  void syntheticPromptsArePrefixesOfOneTextWithLengthsFromTheDistributions() {
    InferencePerfProfile p = InferencePerfProfiles.parse(SYNTHETIC, "s.yaml");
    LengthDistributionData d = (LengthDistributionData) p.data();
    assertThat(d.kind()).isEqualTo(LengthDistributionData.Kind.SYNTHETIC);
    assertThat(d.input()).isEqualTo(new LengthDistributionData.Distribution(20, 800, 300, 120, 40));
    assertThat(d.output()).isEqualTo(new LengthDistributionData.Distribution(10, 200, 80, 30, 40));
    assertThat(d.uniquePrompts()).isEqualTo(40);
    List<RequestSpec> rs = drain(InferencePerfWorkload.synthetic(p, 7));
    assertThat(rs).hasSize(100);
    for (RequestSpec r : rs) {
      assertThat(r.inputTokens()).isBetween(1 + 20, 1 + 800); // BOS + the drawn length
      assertThat(r.outputTokens()).isBetween(10, 200);
    }
    // request n sends prompt n mod 40: same ids and output length
    assertThat(rs.get(45).promptTokens()).isEqualTo(rs.get(5).promptTokens());
    assertThat(rs.get(45).outputTokens()).isEqualTo(rs.get(5).outputTokens());
    assertThat(rs.subList(0, 40).stream().mapToInt(RequestSpec::outputTokens).distinct().count()).isGreaterThan(10);
    // every prompt is a prefix of every longer one (one text)
    RequestSpec shortest = rs.stream().min((a, b) -> a.inputTokens() - b.inputTokens()).orElseThrow();
    for (RequestSpec r : rs) {
      assertThat(Arrays.copyOf(r.promptTokens(), shortest.inputTokens())).isEqualTo(shortest.promptTokens());
    }
  }

  @Test
  void randomPromptsShareNothing() {
    InferencePerfProfile p = InferencePerfProfiles.parse(SYNTHETIC.replace("synthetic", "random"), "r.yaml");
    assertThat(((LengthDistributionData) p.data()).kind()).isEqualTo(LengthDistributionData.Kind.RANDOM);
    List<RequestSpec> rs = drain(InferencePerfWorkload.synthetic(p, 7));
    assertThat(rs).hasSize(100);
    // the first 16 tokens (a cache block) of the 40 distinct prompts are all different
    assertThat(rs.subList(0, 40).stream().map(r -> Arrays.toString(Arrays.copyOf(r.promptTokens(), 16))).distinct())
        .hasSize(40);
    assertThat(rs).allSatisfy(r -> assertThat(r.prefixLength()).isZero());
  }

  @Test
  void lengthsFollowInferencePerfsClippedRoundedNormal() {
    LengthDistributionData.Distribution d = new LengthDistributionData.Distribution(100, 140, 120, 30, 20_000);
    int[] xs = d.draw(new java.util.SplittableRandom(1));
    long atMin = Arrays.stream(xs).filter(x -> x == 100).count();
    long atMax = Arrays.stream(xs).filter(x -> x == 140).count();
    assertThat(Arrays.stream(xs).allMatch(x -> x >= 100 && x <= 140)).isTrue();
    // P(Z < -2/3) = 0.2525 of the draws are clipped to each end
    assertThat(atMin / 20_000.0).isCloseTo(0.2525, org.assertj.core.data.Offset.offset(0.015));
    assertThat(atMax / 20_000.0).isCloseTo(0.2525, org.assertj.core.data.Offset.offset(0.015));
  }

  @Test
  void writtenBackTheProfileIsEqual() {
    for (String text : List.of(SYNTHETIC, SYNTHETIC.replace("synthetic", "random"))) {
      InferencePerfProfile p = InferencePerfProfiles.parse(text, "p.yaml");
      assertThat(InferencePerfProfiles.parse(ProfileWriter.toYaml(p, List.of("x")), "w.yaml")).isEqualTo(p);
    }
    InferencePerfProfile shared = new InferencePerfProfile(new SharedPrefixData(3, 2, 10, 20, 5),
        List.of(new LoadStage(2.5, 7.25), new LoadStage(1, 3)), 0.5, 12, InferencePerfProfile.LoadType.POISSON, true);
    assertThat(InferencePerfProfiles.parse(ProfileWriter.toYaml(shared, List.of()), "w.yaml")).isEqualTo(shared);
  }

  @ParameterizedTest
  @ValueSource(strings = {"api: completion", "api: {type: completion, streaming: true}", "api: {type: completion}"})
  void apiIsAStringOrAMapping(String api) {
    assertThat(InferencePerfProfiles.parse(SYNTHETIC.replace("api: completion", api), "a.yaml").data())
        .isInstanceOf(LengthDistributionData.class);
  }

  @Test
  void refusalsAreOneLineWithTheirPlace() {
    String[][] cases = {
        {SYNTHETIC.replace("std: 120, ", ""), null},
        {SYNTHETIC.replace("std: 120", "std: 120, std_dev: 3"), "s.yaml:4:64: at 'data.input_distribution': std_dev and its alias std: give one, not both"},
        {SYNTHETIC + "server: {type: vllm, ignore_eos: false}\n", "s.yaml:10:1: server.ignore_eos: false is not supported"},
        {SYNTHETIC.replace("  stages:\n    - {rate: 10, duration: 10}", "  sweep: {type: geometric}"), "s.yaml:8:3: at 'load': load.sweep is not supported"},
        {SYNTHETIC + "server: {ignore_eos: maybe}\n", "s.yaml:10:1: server.ignore_eos must be true or false, got \"maybe\""},
        {SYNTHETIC.replace("mean: 300", "mean: 900"), "s.yaml:4:43: at 'data.input_distribution': mean must lie in [min, max] = [20, 800]"},
        {SYNTHETIC.replace("min: 10,", "min: 0,"), "s.yaml:5:3: at 'data': output_distribution.min must be at least 1 token"},
        {SYNTHETIC.replace("type: synthetic", "type: shareGPT"), "s.yaml:3:3: at 'data': data.type shareGPT reads its prompts from a dataset (data.path)"},
        {SYNTHETIC.replace("type: synthetic", "type: cnn_dailymail"), "s.yaml:3:3: at 'data': data.type cnn_dailymail reads its prompts from a dataset"},
        {SYNTHETIC.replace("type: synthetic", "type: mock"), "s.yaml:3:3: at 'data': data.type mock sends prompts 'text1'"},
        {SYNTHETIC.replace("type: synthetic", "type: poems"), "s.yaml:3:3: at 'data': data.type 'poems' is not known, expected one of [shared_prefix, synthetic, random]"},
        {SYNTHETIC.replace("api: completion", "api: chat"), "s.yaml:1:1: api: inference-perf sends synthetic prompts over the completion API only, got chat"},
        {SYNTHETIC.replace("api: completion", "api: {type: grpc}"), "s.yaml:1:1: api.type 'grpc' is not supported, expected completion or chat"},
        {SYNTHETIC.replace("  input_distribution", "  path: data.json\n  input_distribution"), "s.yaml:4:3: at 'data': data.path reads a dataset or trace file"},
    };
    assertThat(InferencePerfProfiles.parse(cases[0][0], "s.yaml").data()).isInstanceOf(LengthDistributionData.class);
    for (int i = 1; i < cases.length; i++) {
      String[] c = cases[i];
      assertThatThrownBy(() -> InferencePerfProfiles.parse(c[0], "s.yaml")).as(c[1])
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith(c[1])
          .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    }
  }

  /**
   * A distribution without total_count gets inference-perf's: the most requests of one stage plus
   * one (the Oct-Nov 2025 builds set it so in main.py; required since neither file gives it).
   */
  @Test
  void aLeftOutTotalCountIsTheLargestStagePlusOne() {
    String noCounts = SYNTHETIC.replace(", total_count: 40}", "}")
        .replace("- {rate: 10, duration: 10}", "- {rate: 10, duration: 10}\n    - {rate: 2.5, duration: 61}");
    assertThat(noCounts).doesNotContain("total_count");
    LengthDistributionData d = (LengthDistributionData) InferencePerfProfiles.parse(noCounts, "s.yaml").data();
    assertThat(d.input().totalCount()).isEqualTo(153); // int(2.5 x 61) = 152 requests in the larger stage, + 1
    assertThat(d.output().totalCount()).isEqualTo(153);
    // given on one side only: that side keeps it
    String oneCount = SYNTHETIC.replace(", total_count: 40}\n  output", "}\n  output").replace("total_count: 40", "total_count: 500");
    LengthDistributionData one = (LengthDistributionData) InferencePerfProfiles.parse(oneCount, "s.yaml").data();
    assertThat(one.input().totalCount()).isEqualTo(101);
    assertThat(one.output().totalCount()).isEqualTo(500);
    // ignore_eos: true in the server section, inference-perf's default, is taken
    assertThat(InferencePerfProfiles.parse(SYNTHETIC + "server: {type: vllm, ignore_eos: true}\n", "s.yaml").data())
        .isInstanceOf(LengthDistributionData.class);
  }
}
