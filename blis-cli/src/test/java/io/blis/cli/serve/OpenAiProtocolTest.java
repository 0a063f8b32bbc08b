package io.blis.cli.serve;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class OpenAiProtocolTest {

  private static ServeRequest parse(String body, boolean chat) {
    return OpenAiProtocol.parse(body.getBytes(StandardCharsets.UTF_8), chat);
  }

  @Test
  void tokenIdPromptsAreTakenExactly() {
    ServeRequest r = parse("{\"model\":\"m\",\"prompt\":[5,6,7,5],\"max_tokens\":9,\"stream\":true,"
        + "\"stream_options\":{\"include_usage\":true}}", false);
    assertThat(r.promptTokens()).containsExactly(5, 6, 7, 5);
    assertThat(r.maxTokens()).isEqualTo(9);
    assertThat(r.stream()).isTrue();
    assertThat(r.includeUsage()).isTrue();
    assertThat(parse("{\"prompt\":[[1,2,3]]}", false).promptTokens()).containsExactly(1, 2, 3);
  }

  @Test
  void textPromptsCountWordsPlusBosAndSharedTextIsASharedPrefix() {
    ServeRequest a = parse("{\"prompt\":\"the quick  brown\\nfox\"}", false);
    ServeRequest b = parse("{\"prompt\":\"the quick brown dog jumps\"}", false);
    assertThat(a.promptTokens()).hasSize(5);
    assertThat(a.promptTokens()[0]).isEqualTo(OpenAiProtocol.BOS);
    assertThat(b.promptTokens()).startsWith(java.util.Arrays.copyOf(a.promptTokens(), 4));
    assertThat(b.promptTokens()[4]).isNotEqualTo(a.promptTokens()[4]);
    assertThat(a.maxTokens()).isEqualTo(-1);
    assertThat(a.stream()).isFalse();
  }

  @Test
  void chatPromptsAddTheTemplateTokens() {
    ServeRequest one = parse("{\"messages\":[{\"role\":\"user\",\"content\":\"a b c\"}],\"max_completion_tokens\":4}", true);
    // Llama 3's chat template: <|begin_of_text|> (1); <|start_header_id|>user<|end_header_id|>\n\n
    // (4); "a b c" (3, a token per word); <|eot_id|> (1); <|start_header_id|>assistant
    // <|end_header_id|>\n\n (4): 13 (see SimulatedServerTest for the token ids)
    assertThat(one.promptTokens()).hasSize(13);
    assertThat(one.maxTokens()).isEqualTo(4);
    ServeRequest two = parse("{\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},"
        + "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a b c\"}]}]}", true);
    // 1 + system (4 + "be brief" 2 + 1) + user (4 + 3 + 1) + reply header 4 = 20
    assertThat(two.promptTokens()).hasSize(20);
  }

  @Test
  void aLineSeparatorInAQuotedValueIsEscaped() {
    assertThatThrownBy(() -> parse("{\"prompt\":\"a\",\"n\":\"x\u2028y\"}", false))
        .hasMessage("'n' must be 1 (the simulated server returns one choice), got \"x\\u2028y\"");
  }

  @Test
  void aBodyThatIsNotJsonSaysWhereWithoutTheParsersInternals() {
    assertThatThrownBy(() -> parse("{\"prompt\": [1, 2", false))
        .hasMessage("request body, line 1, column 17: not valid JSON: Unexpected end-of-input:"
            + " expected close marker for Array (start marker at (line 1, column 12))");
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "not json|not valid JSON",
      "[1,2]|must be a JSON object",
      "{}|'prompt' is required",
      "{\"prompt\":[1,\"x\"]}|element 1",
      "{\"prompt\":[\"a\",\"b\"]}|batch of prompts is not supported",
      "{\"prompt\":\"a\",\"max_tokens\":0}|'max_tokens' must be a positive integer",
      "{\"prompt\":\"a\",\"max_tokens\":1.5}|'max_tokens' must be a positive integer",
      "{\"prompt\":\"a\",\"n\":2}|'n' must be 1",
      "{\"prompt\":\"a\",\"stream\":\"yes\"}|'stream' must be true or false",
      "{\"prompt\":\"a\",\"model\":3}|'model' must be a string",
      "{\"prompt\":[]}|must not be empty"})
  void badCompletionBodiesNameTheField(String body, String message) {
    assertThatThrownBy(() -> parse(body, false)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(message);
  }

  @Test
  void badChatBodiesNameTheField() {
    assertThatThrownBy(() -> parse("{\"messages\":[]}", true)).hasMessageContaining("'messages' must be a non-empty list");
    assertThatThrownBy(() -> parse("{\"messages\":[3]}", true)).hasMessageContaining("'messages[0]' must be an object");
    assertThatThrownBy(() -> parse("{\"messages\":[{\"content\":5}]}", true)).hasMessageContaining("messages[0].content");
  }

  @Test
  void chunksAndAnswersAreShapedAsVllmShapesThem() throws Exception {
    String c = OpenAiProtocol.chunk(7, true, "m", 100, " the", true, null);
    assertThat(c).startsWith("data: ").endsWith("\n\n");
    JsonNode n = OpenAiProtocol.JSON.readTree(c.substring(6));
    assertThat(n.get("object").asText()).isEqualTo("chat.completion.chunk");
    assertThat(n.at("/choices/0/delta/role").asText()).isEqualTo("assistant");
    assertThat(n.at("/choices/0/delta/content").asText()).isEqualTo(" the");
    assertThat(n.at("/choices/0/finish_reason").isNull()).isTrue();
    JsonNode last = OpenAiProtocol.JSON.readTree(OpenAiProtocol.chunk(7, false, "m", 100, " x", false, "length").substring(6));
    assertThat(last.at("/choices/0/text").asText()).isEqualTo(" x");
    assertThat(last.at("/choices/0/finish_reason").asText()).isEqualTo("length");
    JsonNode usage = OpenAiProtocol.JSON.readTree(OpenAiProtocol.usageChunk(7, false, "m", 100, 11, 3).substring(6));
    assertThat(usage.get("choices")).isEmpty();
    assertThat(usage.at("/usage/total_tokens").asInt()).isEqualTo(14);
    JsonNode whole = OpenAiProtocol.JSON.readTree(OpenAiProtocol.completion(7, true, "m", 100, 11, 3));
    assertThat(whole.at("/choices/0/message/content").asText().split(" ")).hasSize(4); // leading space + 3 words
    assertThat(whole.at("/usage/completion_tokens").asInt()).isEqualTo(3);
    JsonNode err = OpenAiProtocol.JSON.readTree(OpenAiProtocol.error(404, "no"));
    assertThat(err.at("/error/type").asText()).isEqualTo("NotFoundError");
    assertThat(err.at("/error/code").asInt()).isEqualTo(404);
  }
}
