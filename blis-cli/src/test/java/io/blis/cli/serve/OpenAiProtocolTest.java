package io.blis.cli.serve;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

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
    assertThat(a.maxTokens()).isEqualTo(16);
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
        .hasMessage("'n' must be an integer in [1, 16384] (vLLM's VLLM_MAX_N_SEQUENCES), got \"x\\u2028y\"");
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
      "{\"prompt\":\"a\",\"max_tokens\":0}|'max_tokens' must be an integer of at least 1",
      "{\"prompt\":\"a\",\"max_tokens\":1.5}|'max_tokens' must be an integer of at least 1",
      "{\"prompt\":\"a\",\"n\":16385}|'n' must be an integer in [1, 16384]",
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

  // ------------------------------------------------------------------ vLLM's validation

  private static String c(String fields) {
    return "{\"prompt\":\"a b\"" + (fields.isEmpty() ? "" : "," + fields) + "}";
  }

  private static String ch(String fields) {
    return "{\"messages\":[{\"role\":\"user\",\"content\":\"a b\"}]" + (fields.isEmpty() ? "" : "," + fields) + "}";
  }

  /** Body, endpoint (true: chat), the whole one-line message. */
  static Stream<Arguments> refusals() {
    return Stream.of(
        Arguments.of(c("\"n\":0"), false, "'n' must be an integer in [1, 16384] (vLLM's VLLM_MAX_N_SEQUENCES), got 0"),
        Arguments.of(c("\"n\":1.5"), false, "'n' must be an integer in [1, 16384] (vLLM's VLLM_MAX_N_SEQUENCES), got 1.5"),
        Arguments.of(c("\"n\":16385"), false, "'n' must be an integer in [1, 16384] (vLLM's VLLM_MAX_N_SEQUENCES), got 16385"),
        Arguments.of(ch("\"n\":99999999999999999999999"), true, "'n' must be an integer in [1, 16384] (vLLM's VLLM_MAX_N_SEQUENCES), got 99999999999999999999999"),
        Arguments.of(c("\"best_of\":0"), false, "'best_of' must be an integer of at least n (1), got 0"),
        Arguments.of(c("\"best_of\":3"), false, "'best_of' is 3: the simulated server does not pick the best n of best_of sequences; send best_of = n (1) or leave it out"),
        Arguments.of(c("\"n\":2,\"best_of\":1"), false, "'best_of' must be an integer of at least n (2), got 1"),
        Arguments.of(c("\"use_beam_search\":true"), false, "'use_beam_search' is true: the simulated server does not simulate beam search; leave it out or set it to false"),
        Arguments.of(c("\"max_tokens\":-1"), false, "'max_tokens' must be an integer of at least 1, got -1"),
        Arguments.of(c("\"max_tokens\":\"8\""), false, "'max_tokens' must be an integer of at least 1, got \"8\""),
        Arguments.of(c("\"max_tokens\":3000000000"), false, "'max_tokens' must be an integer of at least 1, got 3000000000"),
        Arguments.of(ch("\"max_completion_tokens\":0"), true, "'max_completion_tokens' must be an integer of at least 1, got 0"),
        Arguments.of(ch("\"max_tokens\":0,\"max_completion_tokens\":5"), true, "'max_tokens' must be an integer of at least 1, got 0"),
        Arguments.of(c("\"min_tokens\":-1"), false, "'min_tokens' must be an integer of at least 0, got -1"),
        Arguments.of(c("\"max_tokens\":4,\"min_tokens\":5"), false, "'min_tokens' must be at most max_tokens (4), got 5"),
        Arguments.of(c("\"min_tokens\":17"), false, "'min_tokens' must be at most max_tokens (16), got 17"),
        Arguments.of(c("\"ignore_eos\":1"), false, "'ignore_eos' must be true or false, got 1"),
        Arguments.of(c("\"stream_options\":{\"include_usage\":true}"), false, "'stream_options' can only be given when 'stream' is true (vLLM refuses it otherwise)"),
        Arguments.of(c("\"stream\":true,\"stream_options\":[]"), false, "'stream_options' must be an object such as {\"include_usage\": true}, got []"),
        Arguments.of(c("\"stream\":true,\"stream_options\":{\"include_usage\":\"yes\"}"), false, "'stream_options.include_usage' must be true or false, got \"yes\""),
        Arguments.of(c("\"temperature\":-0.1"), false, "'temperature' must be a number in [0, 2], got -0.1"),
        Arguments.of(c("\"temperature\":2.5"), false, "'temperature' must be a number in [0, 2], got 2.5"),
        Arguments.of(c("\"temperature\":\"hot\""), false, "'temperature' must be a finite number, got \"hot\""),
        Arguments.of(c("\"temperature\":1e999"), false, "'temperature' must be a finite number, got a number beyond the range of a double"),
        Arguments.of(c("\"top_p\":0"), false, "'top_p' must be a number in (0, 1], got 0"),
        Arguments.of(c("\"top_p\":1.01"), false, "'top_p' must be a number in (0, 1], got 1.01"),
        Arguments.of(c("\"top_k\":-2"), false, "'top_k' must be 0 (disabled), -1 (disabled) or an integer of at least 1, got -2"),
        Arguments.of(c("\"top_k\":2.5"), false, "'top_k' must be 0 (disabled), -1 (disabled) or an integer of at least 1, got 2.5"),
        Arguments.of(c("\"min_p\":1.5"), false, "'min_p' must be a number in [0, 1], got 1.5"),
        Arguments.of(c("\"presence_penalty\":-2.5"), false, "'presence_penalty' must be a number in [-2, 2], got -2.5"),
        Arguments.of(c("\"frequency_penalty\":3"), false, "'frequency_penalty' must be a number in [-2, 2], got 3"),
        Arguments.of(c("\"repetition_penalty\":0"), false, "'repetition_penalty' must be a number greater than 0, got 0"),
        Arguments.of(c("\"seed\":1.5"), false, "'seed' must be an integer in [-2^63, 2^63), got 1.5"),
        Arguments.of(c("\"seed\":9223372036854775808"), false, "'seed' must be an integer in [-2^63, 2^63), got 9223372036854775808"),
        Arguments.of(c("\"stop\":\"\""), false, "'stop' must be a non-empty string or a list of non-empty strings, got \"\""),
        Arguments.of(c("\"stop\":5"), false, "'stop' must be a non-empty string or a list of non-empty strings, got 5"),
        Arguments.of(c("\"stop\":[\"x\",\"\"]"), false, "'stop[1]' must be a non-empty string, got \"\""),
        Arguments.of(c("\"bad_words\":\"x\""), false, "'bad_words' must be a list of non-empty strings, got \"x\""),
        Arguments.of(c("\"stop_token_ids\":[1,-2]"), false, "'stop_token_ids[1]' must be a token id (an integer of at least 0), got -2"),
        Arguments.of(c("\"allowed_token_ids\":7"), false, "'allowed_token_ids' must be a list of token ids, got 7"),
        Arguments.of(c("\"logit_bias\":{\"x\":1}"), false, "'logit_bias' keys must be token ids, got \"x\""),
        Arguments.of(c("\"logit_bias\":{\"5\":\"up\"}"), false, "'logit_bias' values must be numbers, got \"up\""),
        Arguments.of(c("\"logit_bias\":[1]"), false, "'logit_bias' must be an object of token ids to numbers, got [1]"),
        Arguments.of(c("\"logprobs\":true"), false, "'logprobs' must be an integer in [0, 20], got true"),
        Arguments.of(c("\"logprobs\":21"), false, "'logprobs' must be an integer in [0, 20], got 21"),
        Arguments.of(ch("\"logprobs\":5"), true, "'logprobs' must be true or false, got 5"),
        Arguments.of(ch("\"top_logprobs\":21,\"logprobs\":true"), true, "'top_logprobs' must be an integer in [0, 20], got 21"),
        Arguments.of(ch("\"top_logprobs\":2"), true, "'top_logprobs' needs 'logprobs' to be true, as vLLM requires"),
        Arguments.of(c("\"prompt_logprobs\":-1"), false, "'prompt_logprobs' must be an integer in [0, 20], got -1"),
        Arguments.of(c("\"prompt_logprobs\":1,\"stream\":true"), false, "'prompt_logprobs' is not available when 'stream' is true, as in vLLM"),
        Arguments.of(c("\"echo\":\"no\""), false, "'echo' must be true or false, got \"no\""),
        Arguments.of(ch("\"echo\":0"), true, "'echo' must be true or false, got 0"),
        Arguments.of(c("\"suffix\":\"end\""), false, "'suffix' is not currently supported (vLLM refuses it too)"),
        Arguments.of(c("\"response_format\":{\"type\":\"xml\"}"), false, "'response_format' must be an object whose 'type' is text, json_object, json_schema or structural_tag, got {\"type\":\"xml\"}"),
        Arguments.of(ch("\"response_format\":{\"type\":\"json_schema\"}"), true, "'response_format' of type json_schema needs a 'json_schema' object"),
        Arguments.of(ch("\"tools\":{}"), true, "'tools' must be a list of tools, got {}"),
        Arguments.of(ch("\"tools\":[{\"type\":\"function\"}]"), true, "'tools[0]' must be an object such as {\"type\": \"function\", \"function\": {\"name\": \"f\"}}"),
        Arguments.of(ch("\"tool_choice\":\"auto\""), true, "'tool_choice' needs 'tools', as in vLLM"),
        Arguments.of(ch("\"tool_choice\":\"maybe\",\"tools\":[]"), true, "'tool_choice' must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}, got \"maybe\""),
        Arguments.of(ch("\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"g\"}},\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]"), true, "'tool_choice' names a function that is not in 'tools'"),
        Arguments.of(c("\"user\":5"), false, "'user' must be a string, got number"),
        Arguments.of(c("\"priority\":\"high\""), false, "'priority' must be an integer, got \"high\""),
        Arguments.of(c("\"cache_salt\":\"\""), false, "'cache_salt' must be a non-empty string, got \"\""),
        Arguments.of(c("\"prompt_embeds\":\"AAAA\""), false, "'prompt_embeds' is not supported by the simulated server: send the prompt as 'prompt' (text or token ids)"),
        Arguments.of(c("\"truncate_prompt_tokens\":0"), false, "'truncate_prompt_tokens' must be an integer of at least 1, got 0"),
        Arguments.of(c("\"add_special_tokens\":\"no\""), false, "'add_special_tokens' must be true or false, got \"no\""),
        Arguments.of("{\"prompt\":\"  \",\"add_special_tokens\":false}", false, "'prompt' is empty: the decoder prompt cannot be empty (an empty text with add_special_tokens false has no token)"),
        Arguments.of(ch("\"continue_final_message\":true,\"add_generation_prompt\":true"), true, "'continue_final_message' and 'add_generation_prompt' cannot both be true, as in vLLM"),
        Arguments.of("{\"messages\":[{\"content\":\"a\"}]}", true, "'messages[0].role' must be a string such as \"user\", got none"));
  }

  @ParameterizedTest
  @MethodSource("refusals")
  void eachFieldVllmValidatesIsValidatedWithAOneLineMessage(String body, boolean chat, String message) {
    assertThatThrownBy(() -> parse(body, chat)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage(message);
  }

  @Test
  void maxTokensDefaultsAsVllms() {
    assertThat(parse(c(""), false).maxTokens()).isEqualTo(16);
    // an explicit null is vLLM's None: the rest of the context
    assertThat(parse(c("\"max_tokens\":null"), false).maxTokens()).isEqualTo(-1);
    assertThat(parse(c("\"max_tokens\":7"), false).maxTokens()).isEqualTo(7);
    assertThat(parse(c("\"max_completion_tokens\":7"), false).maxTokens()).isEqualTo(16);
    assertThat(parse(ch(""), true).maxTokens()).isEqualTo(-1);
    assertThat(parse(ch("\"max_tokens\":5"), true).maxTokens()).isEqualTo(5);
    assertThat(parse(ch("\"max_tokens\":5,\"max_completion_tokens\":9"), true).maxTokens()).isEqualTo(9);
    assertThat(parse(ch("\"max_tokens\":null,\"max_completion_tokens\":null"), true).maxTokens()).isEqualTo(-1);
  }

  @Test
  void nIsTheNumberOfSequences() {
    assertThat(parse(c("\"n\":3"), false).n()).isEqualTo(3);
    assertThat(parse(ch("\"n\":16384"), true).n()).isEqualTo(16384);
    assertThat(parse(c("\"n\":null"), false).n()).isEqualTo(1);
    assertThat(parse(c("\"n\":3"), false).ignored()).isEmpty();
  }

  @Test
  void nOfOneAndBestOfOneAreAccepted() {
    for (String body : List.of(c("\"n\":1"), c("\"n\":null"), c("\"n\":1,\"best_of\":1"), c("\"n\":3,\"best_of\":3"), c("\"best_of\":null"),
        c("\"use_beam_search\":false"))) {
      ServeRequest r = parse(body, false);
      assertThat(r.ignored()).as(body).isEmpty();
    }
  }

  @Test
  void streamOptionsAsVllmReadsThem() {
    // include_usage defaults to true once stream_options is given
    assertThat(parse(c("\"stream\":true,\"stream_options\":{}"), false).includeUsage()).isTrue();
    assertThat(parse(c("\"stream\":true,\"stream_options\":{\"include_usage\":false}"), false).includeUsage()).isFalse();
    assertThat(parse(c("\"stream\":true"), false).includeUsage()).isFalse();
    // an empty object with stream false passes (vLLM tests the object's truth)
    assertThat(parse(c("\"stream_options\":{}"), false).includeUsage()).isFalse();
    assertThat(parse(c("\"stream\":true,\"stream_options\":{\"continuous_usage_stats\":true}"), false).ignored())
        .containsExactly("stream_options.continuous_usage_stats");
  }

  @Test
  void samplingAndOtherFieldsWithoutMeaningHereAreAcceptedAndListedAsIgnored() {
    ServeRequest r = parse(c("\"temperature\":0.7,\"top_p\":0.9,\"top_k\":-1,\"stop\":[\"x\"],\"seed\":-5,"
        + "\"logprobs\":3,\"echo\":true,\"user\":\"u\",\"max_tokens\":8,\"response_format\":{\"type\":\"json_object\"},"
        + "\"presence_penalty\":-2,\"frequency_penalty\":2,\"repetition_penalty\":1.1,\"min_p\":0,\"logit_bias\":{\"50\":-100},"
        + "\"stop_token_ids\":[2],\"ignore_eos\":true,\"min_tokens\":8,\"stream\":false,\"model\":\"m\",\"priority\":3,"
        + "\"some_new_field\":{\"a\":1},\"temperature_typo\":9,\"top_logprobs\":99,\"user_id\":null"), false);
    assertThat(r.ignored()).containsExactly("temperature", "top_p", "top_k", "stop", "seed", "logprobs", "echo",
        "user", "response_format", "presence_penalty", "frequency_penalty", "repetition_penalty", "min_p",
        "logit_bias", "stop_token_ids", "priority", "some_new_field", "temperature_typo", "top_logprobs");
    assertThat(r.maxTokens()).isEqualTo(8);
    ServeRequest chat = parse(ch("\"logprobs\":true,\"top_logprobs\":20,\"tools\":[{\"type\":\"function\","
        + "\"function\":{\"name\":\"f\"}}],\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"f\"}},"
        + "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"s\"}},\"max_completion_tokens\":3,"
        + "\"add_generation_prompt\":true,\"suffix\":\"x\""), true);
    assertThat(chat.ignored()).containsExactly("logprobs", "top_logprobs", "tools", "tool_choice", "response_format", "suffix");
    assertThat(parse(c(""), false).ignored()).isEmpty();
  }

  @Test
  void ignoredNamesAreHeaderSafeAndBounded() {
    assertThat(parse(c("\"a b\\r\\nX-Evil: 1\":1,\"\":2,\"caf\u00e9\":3"), false).ignored())
        .containsExactly("a%20b%0D%0AX-Evil%3A%201", "%22%22", "caf%C3%A9");
    StringBuilder many = new StringBuilder();
    for (int i = 0; i < 40; i++) {
      many.append(i == 0 ? "" : ",").append("\"f").append(i).append("\":1");
    }
    List<String> ignored = parse(c(many.toString()), false).ignored();
    assertThat(ignored).hasSize(33).endsWith("+8-more");
    assertThat(parse(c("\"" + "x".repeat(200) + "\":1"), false).ignored().get(0)).hasSize(64);
  }

  @Test
  void tokenIdsAreCheckedAgainstAKnownVocabulary() {
    byte[] body = "{\"prompt\":[0,31999,32000]}".getBytes(StandardCharsets.UTF_8);
    assertThat(OpenAiProtocol.parse(body, false).promptTokens()).containsExactly(0, 31999, 32000);
    assertThatThrownBy(() -> OpenAiProtocol.parse(body, false, 32000))
        .hasMessage("'prompt[2]': token id 32000 is out of vocabulary (the model's ids lie in [0, 32000))");
    assertThatThrownBy(() -> OpenAiProtocol.parse(c("\"stop_token_ids\":[32000]").getBytes(StandardCharsets.UTF_8), false, 32000))
        .hasMessage("'stop_token_ids[0]': token id 32000 is out of vocabulary (the model's ids lie in [0, 32000))");
    assertThat(OpenAiProtocol.parse("{\"prompt\":[31999]}".getBytes(StandardCharsets.UTF_8), false, 32000).promptTokens())
        .containsExactly(31999);
  }

  @Test
  void promptShapingFieldsAreHonoured() {
    // add_special_tokens false: no BOS before a text prompt
    assertThat(parse("{\"prompt\":\"a b c\",\"add_special_tokens\":false}", false).promptTokens()).hasSize(3);
    // truncate_prompt_tokens keeps the last k tokens, as vLLM does
    assertThat(parse("{\"prompt\":[1,2,3,4,5],\"truncate_prompt_tokens\":2}", false).promptTokens()).containsExactly(4, 5);
    assertThat(parse("{\"prompt\":[1,2],\"truncate_prompt_tokens\":9}", false).promptTokens()).containsExactly(1, 2);
    // chat, "a b" from the user: BOS 1 + header 4 + 2 words + <|eot_id|> 1 + reply header 4 = 12
    assertThat(parse(ch(""), true).promptTokens()).hasSize(12);
    assertThat(parse(ch("\"add_generation_prompt\":false"), true).promptTokens()).hasSize(8);
    // the last message stays open: no <|eot_id|> and no reply header
    assertThat(parse(ch("\"continue_final_message\":true"), true).promptTokens()).hasSize(7);
    // a BOS on top of the template's
    assertThat(parse(ch("\"add_special_tokens\":true"), true).promptTokens()).hasSize(13);
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
