package io.blis.cli.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.blis.cli.serve.OpenAiProtocol;
import io.blis.engine.fuzz.OneLineErrors;
import io.blis.engine.fuzz.ParserFuzzing;

/**
 * The body of a POST to {@code blis serve}'s /v1/completions and /v1/chat/completions, read as
 * both; a refusal is the 400 answer's message, so it is held to the same one line.
 */
class ServeRequestBodyFuzzTest extends ParserFuzzing {

  @FuzzTest
  void fuzz(byte[] in) throws Exception {
    if (!counted(getClass(), in)) {
      return;
    }
    String text = text(in);
    OneLineErrors.accepted(text, null, () -> OpenAiProtocol.parse(in, false));
    OneLineErrors.accepted(text, null, () -> OpenAiProtocol.parse(in, true));
  }
}
