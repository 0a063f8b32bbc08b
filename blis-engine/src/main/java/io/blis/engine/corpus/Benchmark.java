package io.blis.engine.corpus;

import io.blis.workload.TextFiles;
import java.util.Locale;

/** How a published point was measured, which decides how it is replayed. */
public enum Benchmark {
  /**
   * vLLM's latency benchmark ({@code benchmark_latency.py}, {@code vllm bench latency}): one batch
   * of prompts handed at once to the offline engine (no API server), timed until the whole batch
   * has finished, after warm-up batches of the same prompts.
   */
  LATENCY,
  /**
   * vLLM's serving benchmark ({@code benchmark_serving.py}, {@code vllm bench serve}) against the
   * OpenAI-compatible server: requests sent at a rate (Poisson, or all at once), optionally at most
   * a number in flight, each streamed.
   */
  SERVING,
  /** vLLM's offline throughput benchmark: every prompt handed at once to the offline engine. */
  THROUGHPUT,
  /** Another client against the OpenAI-compatible server (llmperf, genai-perf, guidellm, ...). */
  CLIENT;

  /** The name in corpus files. */
  public String key() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Whether the engine ran behind vLLM's OpenAI-compatible server (rather than offline). */
  public boolean online() {
    return this == SERVING || this == CLIENT;
  }

  /** Parses a corpus file's name. */
  public static Benchmark parse(String s) {
    for (Benchmark b : values()) {
      if (b.key().equals(s)) {
        return b;
      }
    }
    throw new IllegalArgumentException("expected latency, serving, throughput or client, got '"
        + TextFiles.quote(s) + "'");
  }
}
