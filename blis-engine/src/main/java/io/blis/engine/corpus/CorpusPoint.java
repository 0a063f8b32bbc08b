package io.blis.engine.corpus;

import io.blis.engine.cluster.VllmVersion;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One published measurement of a real vLLM server, with what its replay needs (the fields of a
 * corpus file's point after the source's defaults were applied; docs/public-measurements/SCHEMA.md).
 *
 * @param source the source's id
 * @param id the point's id, unique within its source
 * @param half the source's half of the corpus
 * @param model HF model name
 * @param modelConfig the model's {@code config.json} in the corpus, or null for a bundled model
 * @param gpu the GPU, a catalog name
 * @param tp tensor-parallel degree
 * @param pp pipeline-parallel stages
 * @param dp data-parallel ranks
 * @param expertParallel whether experts were spread by expert parallelism over the tp x dp GPUs
 * @param version the vLLM release the measurement ran
 * @param v1 whether it ran vLLM's V1 engine (false: V0)
 * @param benchmark how it was measured
 * @param workload what was sent
 * @param server the vLLM arguments the source states
 * @param measured the published statistics, in their units (ms, s, requests/s, tokens/s)
 * @param headline the statistic the point's error is reported by: the first it measured in {@link
 *     Measured}'s order of preference, unless the source file names another (decided before the point
 *     was simulated, for example where the published throughput hangs on output lengths nobody
 *     recorded)
 * @param readFromChart whether the numbers were read off a chart
 * @param assumptions what the replay assumes that the source does not say (source's and point's)
 */
public record CorpusPoint(String source, String id, CorpusHalf half, String model, Path modelConfig, String gpu,
    int tp, int pp, int dp, boolean expertParallel, VllmVersion version, boolean v1, Benchmark benchmark,
    Workload workload, Server server, Map<Measured, Double> measured, Measured headline, boolean readFromChart,
    List<String> assumptions) {

  public CorpusPoint {
    measured = java.util.Collections.unmodifiableMap(new java.util.EnumMap<>(measured));
    assumptions = List.copyOf(assumptions);
  }

  /** {@code source/id}. */
  public String key() {
    return source + "/" + id;
  }

  /**
   * What was sent.
   *
   * @param batch latency benchmark: prompts per batch (0 otherwise)
   * @param inputTokens fixed prompt length (0 when the lengths vary)
   * @param outputTokens fixed output length (0 when the lengths vary)
   * @param numPrompts requests sent (serving, throughput, client)
   * @param requestRate requests per second, infinite for all at once
   * @param burstiness gamma shape of the gaps (1: Poisson)
   * @param maxConcurrency most requests in flight, 0 for no limit
   * @param dataset random, sharegpt, sonnet, ... (empty for latency)
   * @param rangeRatio random dataset's range ratio as given, NaN when not given
   * @param rangeRatioAroundMean whether the range ratio spreads lengths around the mean ({@code [(1 -
   *     r) L, (1 + r) L]}, scripts from 2025) rather than below it ({@code [r L, L]})
   * @param prefixLen shared prefix tokens of every prompt
   * @param meanInputTokens measured mean prompt length of varying lengths, NaN when fixed
   * @param meanOutputTokens measured mean output length of varying lengths, NaN when fixed
   */
  public record Workload(int batch, int inputTokens, int outputTokens, int numPrompts, double requestRate,
      double burstiness, int maxConcurrency, String dataset, double rangeRatio, boolean rangeRatioAroundMean,
      int prefixLen, double meanInputTokens, double meanOutputTokens) {

    /** Whether every request arrives at once. */
    public boolean allAtOnce() {
      return Double.isInfinite(requestRate);
    }
  }

  /**
   * The vLLM arguments a source states (empty: not stated, the version's default applies).
   */
  public record Server(Optional<Integer> maxNumSeqs, Optional<Integer> maxNumBatchedTokens,
      Optional<Integer> maxModelLen, Optional<Double> gpuMemoryUtilization, Optional<Boolean> chunkedPrefill,
      Optional<Boolean> prefixCaching, Optional<Boolean> enforceEager, Optional<Integer> numSchedulerSteps,
      Optional<Boolean> asyncScheduling, Optional<String> quantization, Optional<String> kvCacheDtype) {

    /** Nothing stated. */
    public static final Server NONE = new Server(Optional.empty(), Optional.empty(), Optional.empty(),
        Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
        Optional.empty(), Optional.empty());
  }
}
