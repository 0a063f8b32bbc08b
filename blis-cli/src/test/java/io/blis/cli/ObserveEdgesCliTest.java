package io.blis.cli;

import static io.blis.cli.BadInputCliTest.refused;
import static io.blis.cli.BlisCliTest.blis;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code blis observe}'s flags that cannot describe a run: refused in one line, before anything is
 * sent (the endpoint is a closed port: a refusal that came from it would say so).
 */
class ObserveEdgesCliTest {

  private static BlisCliTest.Outcome observe(Path dir, String... flags) {
    String[] head = {"observe", "--endpoint", "http://127.0.0.1:9/v1", "--out", dir.resolve("out").toString(),
        "--connect-timeout-s", "1", "--num-requests", "2"};
    String[] args = new String[head.length + flags.length];
    System.arraycopy(head, 0, args, 0, head.length);
    System.arraycopy(flags, 0, args, head.length, flags.length);
    return blis(args);
  }

  @Test
  void minTokensAboveTheOutputTokensAskedIsRefused(@TempDir Path dir) {
    refused(observe(dir, "--served-model", "m", "--output-tokens", "100", "--min-tokens", "101"),
        "blis observe: --min-tokens 101 is above --output-tokens 100: a request's min_tokens must be at most its"
            + " max_tokens (the server refuses it); give --min-tokens at most 100");
    refused(observe(dir, "--served-model", "m", "--min-tokens", "600"), "--min-tokens 600 is above --output-tokens 512");
    refused(observe(dir, "--served-model", "m", "--output-tokens", "64.5", "--min-tokens", "65"),
        "--min-tokens 65 is above --output-tokens 64.5");
    // at most the mean: the run goes on to the server (which is not there)
    BlisCliTest.Outcome equal = observe(dir, "--served-model", "m", "--output-tokens", "100", "--min-tokens", "100");
    refused(equal, "--endpoint: GET http://127.0.0.1:9/v1/models: cannot connect");
    org.assertj.core.api.Assertions.assertThat(Files.exists(dir.resolve("out"))).isFalse();
  }

  @Test
  void aBlankModelIsRefusedNamingTheFlag(@TempDir Path dir) {
    refused(observe(dir, "--model", ""), "blis observe: --model must name a model (a bundled name or alias, a"
        + " config.json, or the name the requests send), got a blank name");
    refused(observe(dir, "--model", "  ", "--served-model", "m"), "--model must name a model", "got a blank name");
    refused(observe(dir, "--model", "llama-2-7b", "--served-model", ""), "--served-model must name the model the"
        + " server answers to, got a blank name");
  }
}
