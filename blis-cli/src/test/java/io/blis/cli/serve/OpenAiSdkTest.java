package io.blis.cli.serve;

import static org.assertj.core.api.Assertions.assertThat;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.StreamResponse;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionCreateParams;
import com.openai.models.completions.CompletionUsage;
import io.blis.engine.EngineLimits;
import io.blis.engine.LinearTestModel;
import io.blis.engine.Simulation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A real client nobody here wrote, the official OpenAI Java SDK, drives the simulated server. */
class OpenAiSdkTest {

  private SimulatedServer server;
  private OpenAIClient client;

  @BeforeEach
  void start() {
    server = SimulatedServer.start(Simulation.builder().latencyModel(new LinearTestModel(2000, 5, 0, 0, 0, 0))
        .totalKvBlocks(1000).limits(new EngineLimits(32, 1024, 0, 2048)), ServeConfig.loopback(0, "blis-sim"));
    client = OpenAIOkHttpClient.builder().baseUrl(server.baseUrl()).apiKey("unused").maxRetries(0)
        .timeout(Duration.ofSeconds(30)).build();
  }

  @AfterEach
  void stop() {
    client.close();
    server.close();
  }

  @Test
  void streamsAChatCompletionWithUsage() {
    ChatCompletionCreateParams params = ChatCompletionCreateParams.builder().model("blis-sim")
        .addUserMessage("how many tokens are in this prompt").maxCompletionTokens(12)
        .streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build()).build();
    StringBuilder text = new StringBuilder();
    List<CompletionUsage> usages = new ArrayList<>();
    List<String> finishReasons = new ArrayList<>();
    int contentChunks = 0;
    try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(params)) {
      for (ChatCompletionChunk chunk : (Iterable<ChatCompletionChunk>) stream.stream()::iterator) {
        chunk.usage().ifPresent(usages::add);
        for (ChatCompletionChunk.Choice c : chunk.choices()) {
          Optional<String> content = c.delta().content();
          if (content.isPresent() && !content.get().isEmpty()) {
            contentChunks++;
            text.append(content.get());
          }
          c.finishReason().ifPresent(r -> finishReasons.add(r.asString()));
        }
      }
    }
    assertThat(contentChunks).isEqualTo(12);
    assertThat(text.toString().trim().split(" ")).hasSize(12);
    assertThat(finishReasons).containsExactly("length");
    assertThat(usages).hasSize(1);
    assertThat(usages.get(0).completionTokens()).isEqualTo(12);
    // Llama 3's chat template: <|begin_of_text|> 1, the user header and blank line 4, 7 words, <|eot_id|>
    // 1, the assistant header and blank line 4 (see SimulatedServerTest)
    assertThat(usages.get(0).promptTokens()).isEqualTo(1 + 4 + 7 + 1 + 4);
  }

  @Test
  void streamsACompletionAndAnswersWithoutStreaming() {
    CompletionCreateParams params = CompletionCreateParams.builder().model("blis-sim")
        .prompt("one two three four").maxTokens(5)
        .streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build()).build();
    List<String> pieces = new ArrayList<>();
    long usageTotal = -1;
    try (StreamResponse<Completion> stream = client.completions().createStreaming(params)) {
      for (Completion c : (Iterable<Completion>) stream.stream()::iterator) {
        c.choices().forEach(choice -> pieces.add(choice.text()));
        if (c.usage().isPresent()) {
          usageTotal = c.usage().get().totalTokens();
        }
      }
    }
    assertThat(pieces).hasSize(5);
    assertThat(usageTotal).isEqualTo(5 + 5);

    ChatCompletion whole = client.chat().completions().create(ChatCompletionCreateParams.builder()
        .model("blis-sim").addUserMessage("hi").maxCompletionTokens(3).build());
    assertThat(whole.choices().get(0).message().content()).hasValueSatisfying(t -> assertThat(t.trim().split(" ")).hasSize(3));
    assertThat(whole.usage()).hasValueSatisfying(u -> assertThat(u.completionTokens()).isEqualTo(3));
    assertThat(client.models().list().data()).extracting(m -> m.id()).containsExactly("blis-sim");

    // parallel sampling: n choices in one answer
    ChatCompletion three = client.chat().completions().create(ChatCompletionCreateParams.builder()
        .model("blis-sim").addUserMessage("hi").maxCompletionTokens(2).n(3).build());
    assertThat(three.choices()).extracting(c -> c.index()).containsExactly(0L, 1L, 2L);
    assertThat(three.usage()).hasValueSatisfying(u -> assertThat(u.completionTokens()).isEqualTo(6));
  }
}
