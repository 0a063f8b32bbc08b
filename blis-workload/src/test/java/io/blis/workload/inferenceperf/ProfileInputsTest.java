package io.blis.workload.inferenceperf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.RequestOutcome;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Malformed inference-perf profiles and experiments files: one clean line each. */
class ProfileInputsTest {

  static final String PROFILE = """
      load:
        type: constant
        stages:
        - rate: 4
          duration: 5
      data:
        type: shared_prefix
        shared_prefix:
          num_groups: 2
          num_prompts_per_group: 5
          system_prompt_len: 100
          question_len: 200
          output_len: 40
      """;

  static String edit(String from, String to) {
    assertThat(PROFILE).contains(from);
    return PROFILE.replace(from, to);
  }

  static String fails(String text) {
    try {
      InferencePerfProfiles.parse(text, "p.yaml");
    } catch (IllegalArgumentException e) {
      assertThat(e.getMessage()).startsWith("p.yaml").doesNotContain("`").doesNotContain("java.")
          .doesNotContain("CoercionConfig").doesNotContain("\n").doesNotContain("Source:");
      return e.getMessage();
    }
    throw new AssertionError("accepted: " + text);
  }

  @Test
  void tokenCountsBeyondTheBoundFailWhereTheyAreWritten() {
    assertThat(fails(edit("output_len: 40", "output_len: 2000000000")))
        .isEqualTo("p.yaml:13:5: at 'data.shared_prefix': shared_prefix: output_len must be in"
            + " [1, 10000000] (the most tokens a request may have), got 2000000000");
    assertThat(fails(edit("question_len: 200", "question_len: 9999950")))
        .contains("system_prompt_len + question_len = 10000050 tokens, more than the 10000000");
    assertThat(fails(edit("num_groups: 2", "num_groups: 100000").replace("num_prompts_per_group: 5",
        "num_prompts_per_group: 100000"))).contains("10000000000 distinct prompts, more than the 1000000");
  }

  @Test
  void promptsThatGrowBeyondTheBoundOnTokenizationFailBeforeAnyRequest() {
    InferencePerfProfile p = InferencePerfProfiles.parse(
        edit("question_len: 200", "question_len: 9999000"), "p.yaml");
    assertThatThrownBy(() -> InferencePerfWorkload.synthetic(p, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("make prompts of").hasMessageContaining("as the server tokenizes them");
  }

  @Test
  void stagesOutsideTheBoundsAndProfilesWithoutRequestsAreErrors() {
    assertThat(fails(edit("duration: 5", "duration: 1e12")))
        .startsWith("p.yaml:5:5: at 'load.stages[0]': load stage: duration must be a positive number"
            + " of seconds, at most 31536000 (365 days)");
    assertThat(fails(edit("rate: 4", "rate: 1e300"))).contains("rate x duration = 5.0E300 requests");
    assertThat(fails(edit("rate: 4", "rate: 0.1")))
        .isEqualTo("p.yaml: the profile sends no request: rate x duration is below 1 in every load"
            + " stage (inference-perf sends int(rate x duration) requests per stage)");
    assertThat(fails(edit("  type: constant\n", "  type: constant\n  request_timeout: 1e300\n")))
        .contains("client timeout must be in [0, 31536000] seconds (365 days)");
    assertThat(fails(edit("  - rate: 4\n    duration: 5\n", "  - null\n")))
        .contains("load.stages[0] is empty, expected {rate, duration}");
  }

  @Test
  void aliasesAreRefusedAndAByteOrderMarkIsIgnored(@TempDir Path dir) throws IOException {
    assertThat(fails(edit("system_prompt_len: 100", "system_prompt_len: &n 100")
        .replace("question_len: 200", "question_len: *n")))
        .isEqualTo("p.yaml:12:19: at 'data.shared_prefix.question_len': YAML aliases are not"
            + " supported (*n): write the value out in full");
    InferencePerfProfile plain = InferencePerfProfiles.parse(PROFILE, "p.yaml");
    Path bom = Files.writeString(dir.resolve("p.yaml"), "\uFEFF" + PROFILE, StandardCharsets.UTF_8);
    assertThat(InferencePerfProfiles.load(bom)).isEqualTo(plain);
    Path zero = Files.writeString(dir.resolve("z.yaml"), edit("rate: 4", "rate: 0.1"));
    assertThatThrownBy(() -> InferencePerfProfiles.load(zero))
        .hasMessageStartingWith(zero + ": the profile sends no request");
  }

  @Test
  void experimentsFilesAreReadWithCleanMessages(@TempDir Path dir) throws IOException {
    Path bad = Files.writeString(dir.resolve("e.json"), "{\"experiments\": [\n  {\"id\": x}\n]}");
    assertThatThrownBy(() -> InferencePerfProfiles.fromExperiments(bad, "a"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(bad + ":2:11: invalid JSON: unrecognized token 'x': was expecting (JSON String,"
            + " Number, Array, Object or token 'null', 'true' or 'false')");
    Path notObject = Files.writeString(dir.resolve("l.json"), "[1, 2]");
    assertThatThrownBy(() -> InferencePerfProfiles.fromExperiments(notObject, "a"))
        .hasMessage(notObject + ": expected a JSON object with a list \"experiments\"");
    Path empty = Files.writeString(dir.resolve("empty.json"), "");
    assertThatThrownBy(() -> InferencePerfProfiles.fromExperiments(empty, "a"))
        .hasMessageStartingWith(empty.toString()).hasMessageNotContaining("No content");
    Path d = Files.createDirectory(dir.resolve("d.json"));
    assertThatThrownBy(() -> InferencePerfProfiles.fromExperiments(d, "a"))
        .hasMessage(d + ": is a directory, expected a file");
  }

  @Test
  void aMultiTurnContextBeyondTheBoundIsANamedError() {
    // Every round of a user adds question + output + 1 tokens to its prompt.
    InferencePerfProfile p = new InferencePerfProfile(new SharedPrefixData(1, 1, 10, 10, 5_000_000),
        List.of(new LoadStage(1, 4)), 0, 300, InferencePerfProfile.LoadType.CONSTANT, true);
    try (RequestSource s = InferencePerfWorkload.synthetic(p, 1)) {
      RequestSpec first = s.next();
      assertThat(s.next()).as("the user's later rounds wait for the first").isNull();
      RequestSpec second = s.onFinished(first, RequestOutcome.COMPLETED, 1).get(0);
      assertThat(second.inputTokens()).isGreaterThan(5_000_000);
      assertThatThrownBy(() -> s.onFinished(second, RequestOutcome.COMPLETED, 2))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("multi-turn chat: round 2 of user 0 would have a prompt of")
          .hasMessageContaining("more than the 10000000 a request may have");
    }
  }

  @Test
  void aLineBreakInAValueIsEscapedSoTheMessageStaysOneLine() {
    assertThat(fails(edit("type: constant", "type: \"const\\nant\"")))
        .contains("load.type 'const\\u000Aant' is not supported");
  }
}
