package io.blis.workload.inferenceperf;

import java.util.List;

/**
 * Writes an {@link InferencePerfProfile} as an inference-perf config that {@link
 * InferencePerfProfiles#load} reads back to an equal profile (every default written out, numbers in
 * full precision).
 */
public final class ProfileWriter {

  private ProfileWriter() {}

  /** The profile as YAML after {@code header} (comment lines, each written with "# "). */
  public static String toYaml(InferencePerfProfile p, List<String> header) {
    StringBuilder y = new StringBuilder(io.blis.workload.StrictYaml.comments(header));
    y.append("load:\n  type: ").append(p.loadType() == InferencePerfProfile.LoadType.POISSON
        ? "poisson" : "constant").append('\n');
    y.append("  interval: ").append(p.stageIntervalS()).append('\n');
    y.append("  request_timeout: ").append(p.clientTimeoutS()).append('\n');
    y.append("  stages:\n");
    for (LoadStage s : p.stages()) {
      y.append("    - {rate: ").append(s.rateRps()).append(", duration: ").append(s.durationS())
          .append("}\n");
    }
    y.append("api: {type: completion}\n");
    y.append("data:\n");
    if (p.data() instanceof SharedPrefixData d) {
      y.append("  type: shared_prefix\n  shared_prefix:\n");
      y.append("    num_groups: ").append(d.numGroups()).append('\n');
      y.append("    num_prompts_per_group: ").append(d.numPromptsPerGroup()).append('\n');
      y.append("    system_prompt_len: ").append(d.systemPromptLen()).append('\n');
      y.append("    question_len: ").append(d.questionLen()).append('\n');
      y.append("    output_len: ").append(d.outputLen()).append('\n');
      if (p.multiTurnChat()) {
        y.append("    enable_multi_turn_chat: true\n");
      }
    } else {
      LengthDistributionData d = (LengthDistributionData) p.data();
      y.append("  type: ").append(d.kind().typeName()).append('\n');
      y.append("  input_distribution: ").append(distribution(d.input())).append('\n');
      y.append("  output_distribution: ").append(distribution(d.output())).append('\n');
    }
    return y.toString();
  }

  private static String distribution(LengthDistributionData.Distribution d) {
    return "{min: " + d.min() + ", max: " + d.max() + ", mean: " + d.mean() + ", std_dev: "
        + d.stdDev() + ", total_count: " + d.totalCount() + "}";
  }
}
