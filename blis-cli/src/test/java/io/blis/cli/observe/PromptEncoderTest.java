package io.blis.cli.observe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.blis.workload.RequestSpec;
import java.net.URI;
import org.junit.jupiter.api.Test;

class PromptEncoderTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final ObserveConfig COMPLETIONS = ObserveConfig.of(URI.create("http://h:1/v1"), "m");

  private static RequestSpec request(int inputTokens, int outputTokens) {
    int[] ids = new int[inputTokens];
    for (int i = 0; i < inputTokens; i++) {
      ids[i] = 100 + i;
    }
    return RequestSpec.simple(7, 0, ids, outputTokens);
  }

  @Test
  void tokenIdsAreSentExactlyWithTheOutputLength() throws Exception {
    PromptEncoder e = new PromptEncoder(COMPLETIONS, 0, 1.0);
    JsonNode body = JSON.readTree(e.body(request(5, 9)));
    assertThat(body.get("model").asText()).isEqualTo("m");
    assertThat(body.get("prompt")).hasSize(5);
    assertThat(body.get("prompt").get(4).asInt()).isEqualTo(104);
    assertThat(body.get("max_tokens").asInt()).isEqualTo(9);
    assertThat(body.get("ignore_eos").asBoolean()).isTrue();
    assertThat(body.get("stream").asBoolean()).isTrue();
    assertThat(body.get("stream_options").get("include_usage").asBoolean()).isTrue();
    assertThat(e.promptTokensSent(request(5, 9))).isEqualTo(5);
    assertThat(JSON.readTree(new PromptEncoder(COMPLETIONS.toBuilder().ignoreEos(false).build(), 0, 1.0).body(request(5, 9))).has("ignore_eos"))
        .isFalse();
  }

  /** Go BLIS's --unconstrained-output and --min-tokens. */
  @Test
  void anUnconstrainedAnswerLeavesItsLengthToTheServer() throws Exception {
    ObserveConfig free = COMPLETIONS.toBuilder().unconstrainedOutput(true).build();
    // a completion asks for the rest of the server's context, the most vLLM accepts
    JsonNode completions = JSON.readTree(new PromptEncoder(free, 0, 1.0, 4096).body(request(5, 9)));
    assertThat(completions.get("max_tokens").asInt()).isEqualTo(4091);
    assertThat(completions.has("ignore_eos")).isFalse();
    assertThat(completions.has("min_tokens")).isFalse();
    assertThat(JSON.readTree(new PromptEncoder(free, 0, 1.0).body(request(5, 9))).has("max_tokens"))
        .as("context unknown: the server's default").isFalse();
    // probes keep their own length
    assertThat(JSON.readTree(new PromptEncoder(free, 0, 1.0, 4096).body(new int[] {1, 2}, 2, 1, false))
        .get("max_tokens").asInt()).isEqualTo(1);
    ObserveConfig chat = free.toBuilder().api(ObserveConfig.Api.CHAT, ObserveConfig.PromptFormat.TEXT).minTokens(4)
        .build();
    JsonNode body = JSON.readTree(new PromptEncoder(chat, 0, 1.0).body(request(5, 9)));
    assertThat(body.has("max_tokens")).isFalse();
    assertThat(body.get("min_tokens").asInt()).isEqualTo(4);
    JsonNode bounded = JSON.readTree(new PromptEncoder(COMPLETIONS.toBuilder().minTokens(9).build(), 0, 1.0)
        .body(request(5, 9)));
    assertThat(bounded.get("max_tokens").asInt()).isEqualTo(9);
    assertThat(bounded.get("min_tokens").asInt()).isEqualTo(9);
    assertThat(bounded.get("ignore_eos").asBoolean()).isTrue();
    assertThatThrownBy(() -> COMPLETIONS.toBuilder().minTokens(-1).build())
        .hasMessage("min_tokens must be >= 0 (0: none), got -1");
  }

  @Test
  void chatTextSubtractsTheServersOwnTokensAndKeepsSharedPrefixes() throws Exception {
    ObserveConfig chat = COMPLETIONS.toBuilder().api(ObserveConfig.Api.CHAT, ObserveConfig.PromptFormat.TEXT).build();
    PromptEncoder e = new PromptEncoder(chat, 8, 1.0);
    JsonNode body = JSON.readTree(e.body(request(100, 3)));
    String content = body.get("messages").get(0).get("content").asText();
    assertThat(body.get("messages").get(0).get("role").asText()).isEqualTo("user");
    assertThat(content.split(" ")).hasSize(92); // 100 tokens - 8 the server adds
    assertThat(e.promptTokensSent(request(100, 3))).isEqualTo(100);
    // the same ids give the same words: a longer prompt over the same ids extends the shorter one
    String longer = JSON.readTree(e.body(request(150, 3))).get("messages").get(0).get("content").asText();
    assertThat(longer).startsWith(content);
    // a prompt shorter than what the server adds still sends one word
    assertThat(e.words(4)).isEqualTo(1);
  }

  @Test
  void wordsScaleWhenTheServerCountsMoreThanOneTokenPerWord() {
    PromptEncoder e = new PromptEncoder(COMPLETIONS.toBuilder().api(ObserveConfig.Api.COMPLETIONS, ObserveConfig.PromptFormat.TEXT).build(), 1, 2.0);
    assertThat(e.words(201)).isEqualTo(100);
    assertThat(e.promptTokensSent(request(201, 1))).isEqualTo(201);
  }

  @Test
  void chatCannotSendTokenIds() {
    assertThatThrownBy(() -> COMPLETIONS.toBuilder().api(ObserveConfig.Api.CHAT, ObserveConfig.PromptFormat.TOKEN_IDS).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("chat requests take text");
  }

  @Test
  void theServersRootIsTheBaseUrlWithoutV1() {
    assertThat(ObserveConfig.rootOf(URI.create("http://h:8000/v1"))).isEqualTo(URI.create("http://h:8000/"));
    assertThat(ObserveConfig.rootOf(URI.create("http://h:8000/v1/"))).isEqualTo(URI.create("http://h:8000/"));
    assertThat(ObserveConfig.rootOf(URI.create("https://gw/llm/v1"))).isEqualTo(URI.create("https://gw/llm/"));
    assertThat(COMPLETIONS.requestUri()).isEqualTo(URI.create("http://h:1/v1/completions"));
    assertThat(COMPLETIONS.metricsUri()).isEqualTo(URI.create("http://h:1/metrics"));
  }
}
