package io.blis.engine.cluster;

import java.util.regex.Pattern;

/**
 * One pool of identical instances in a policy bundle. Null fields inherit the run's defaults
 * (command-line flags, or {@link Cluster#BUILT_IN_DEFAULTS}).
 *
 * @param name pool name: lower-case letters, digits, '.', '_' and '-'
 * @param instances number of instances, at least 1
 * @param model bundled model name or a config.json path
 * @param gpu bundled GPU name, device name, GPU JSON file or FILE#KEY
 * @param tp tensor-parallel degree
 * @param latencyModel latency model provider name
 * @param coefficients coefficient file or inline list
 * @param maxNumSeqs vLLM --max-num-seqs
 * @param maxNumBatchedTokens vLLM --max-num-batched-tokens
 * @param longPrefillTokenThreshold vLLM --long-prefill-token-threshold
 * @param maxModelLen vLLM --max-model-len (0 = unlimited)
 * @param blockSize tokens per KV block
 * @param totalKvBlocks GPU KV blocks (null: computed from memory)
 * @param gpuMemoryUtilization vLLM --gpu-memory-utilization
 * @param pp pipeline-parallel degree (vLLM --pipeline-parallel-size)
 * @param dp data-parallel degree (vLLM --data-parallel-size)
 * @param ep expert-parallel degree: 1 (off), {@code tp x dp}, or {@link #EP_ENABLED} for {@code tp x
 *     dp} whatever they resolve to (vLLM --enable-expert-parallel)
 */
public record PoolSpec(String name, int instances, String model, String gpu, Integer tp,
    String latencyModel, String coefficients, Integer maxNumSeqs, Integer maxNumBatchedTokens,
    Integer longPrefillTokenThreshold, Integer maxModelLen, Integer blockSize, Long totalKvBlocks,
    Double gpuMemoryUtilization, Integer pp, Integer dp, Integer ep) {

  /** {@link #ep()}: expert parallelism over all {@code tp x dp} GPUs, as vLLM enables it. */
  public static final int EP_ENABLED = -1;

  /** A pool without pipeline, data or expert parallelism of its own (inherited from defaults). */
  public PoolSpec(String name, int instances, String model, String gpu, Integer tp,
      String latencyModel, String coefficients, Integer maxNumSeqs, Integer maxNumBatchedTokens,
      Integer longPrefillTokenThreshold, Integer maxModelLen, Integer blockSize, Long totalKvBlocks,
      Double gpuMemoryUtilization) {
    this(name, instances, model, gpu, tp, latencyModel, coefficients, maxNumSeqs, maxNumBatchedTokens,
        longPrefillTokenThreshold, maxModelLen, blockSize, totalKvBlocks, gpuMemoryUtilization, null, null, null);
  }

  private static final Pattern NAME = Pattern.compile("[a-z0-9._-]+");

  public PoolSpec {
    if (name == null || !NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "pool name must be lower-case letters, digits, '.', '_' or '-', got '" + name + "'");
    }
    check(instances >= 1, "instances must be at least 1, got " + instances);
    check(tp == null || tp >= 1, "tp must be at least 1, got " + tp);
    check(pp == null || pp >= 1, "pp must be at least 1, got " + pp);
    check(dp == null || dp >= 1, "dp must be at least 1, got " + dp);
    check(ep == null || ep >= 1 || ep == EP_ENABLED, "ep must be at least 1, got " + ep);
    check(maxNumSeqs == null || maxNumSeqs >= 1, "max_num_seqs must be at least 1, got " + maxNumSeqs);
    check(maxNumBatchedTokens == null || maxNumBatchedTokens >= 1,
        "max_num_batched_tokens must be at least 1, got " + maxNumBatchedTokens);
    check(longPrefillTokenThreshold == null || longPrefillTokenThreshold >= 0,
        "long_prefill_token_threshold must be >= 0, got " + longPrefillTokenThreshold);
    check(maxModelLen == null || maxModelLen >= 0, "max_model_len must be >= 0, got " + maxModelLen);
    check(blockSize == null || blockSize >= 1, "block_size must be at least 1, got " + blockSize);
    check(totalKvBlocks == null || totalKvBlocks >= 1, "total_kv_blocks must be at least 1, got " + totalKvBlocks);
    check(gpuMemoryUtilization == null || (gpuMemoryUtilization > 0 && gpuMemoryUtilization <= 1),
        "gpu_memory_utilization must be in (0, 1], got " + gpuMemoryUtilization);
  }

  private static void check(boolean ok, String message) {
    if (!ok) {
      throw new IllegalArgumentException(message);
    }
  }
}
