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
 * @param role under prefill/decode disaggregation: {@code prefill}, {@code decode} or {@code
 *     both} ({@link io.blis.engine.disagg.Role}); null for both
 */
public record PoolSpec(String name, int instances, String model, String gpu, Integer tp,
    String latencyModel, String coefficients, Integer maxNumSeqs, Integer maxNumBatchedTokens,
    Integer longPrefillTokenThreshold, Integer maxModelLen, Integer blockSize, Long totalKvBlocks,
    Double gpuMemoryUtilization, Integer pp, Integer dp, Integer ep, String role) {

  /** A pool without a disaggregation role of its own. */
  public PoolSpec(String name, int instances, String model, String gpu, Integer tp,
      String latencyModel, String coefficients, Integer maxNumSeqs, Integer maxNumBatchedTokens,
      Integer longPrefillTokenThreshold, Integer maxModelLen, Integer blockSize, Long totalKvBlocks,
      Double gpuMemoryUtilization, Integer pp, Integer dp, Integer ep) {
    this(name, instances, model, gpu, tp, latencyModel, coefficients, maxNumSeqs, maxNumBatchedTokens,
        longPrefillTokenThreshold, maxModelLen, blockSize, totalKvBlocks, gpuMemoryUtilization, pp, dp, ep, null);
  }

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
    if (role != null) {
      role = io.blis.engine.disagg.Role.parse(role).label();
    }
  }

  /** The pool's disaggregation role ({@link io.blis.engine.disagg.Role#BOTH} when not set). */
  public io.blis.engine.disagg.Role disaggregationRole() {
    return role == null ? io.blis.engine.disagg.Role.BOTH : io.blis.engine.disagg.Role.parse(role);
  }

  private static void check(boolean ok, String message) {
    if (!ok) {
      throw new IllegalArgumentException(message);
    }
  }

  /**
   * A spec with only the fields set on the returned builder; every other field stays null
   * (inherited). One instance unless {@link Builder#instances(int)} says otherwise.
   *
   * @param name the pool's name (lower-case letters, digits, '.', '_' and '-')
   * @return a builder of that pool
   */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  /** Sets some fields of a {@link PoolSpec} by name, leaving the others null (inherited). */
  public static final class Builder {
    private final String name;
    private int instances = 1;
    private String model;
    private String gpu;
    private Integer tp;
    private String latencyModel;
    private String coefficients;
    private Integer maxNumSeqs;
    private Integer maxNumBatchedTokens;
    private Integer longPrefillTokenThreshold;
    private Integer maxModelLen;
    private Integer blockSize;
    private Long totalKvBlocks;
    private Double gpuMemoryUtilization;
    private Integer pp;
    private Integer dp;
    private Integer ep;
    private String role;

    private Builder(String name) {
      this.name = name;
    }

    /**
     * Sets instances.
     *
     * @param n instances of the pool, at least 1
     * @return this builder
     */
    public Builder instances(int n) {
      instances = n;
      return this;
    }

    /**
     * Sets model.
     *
     * @param m bundled model name or a config.json path
     * @return this builder
     */
    public Builder model(String m) {
      model = m;
      return this;
    }

    /**
     * Sets gpu.
     *
     * @param g bundled GPU name, device name, GPU JSON file or FILE#KEY
     * @return this builder
     */
    public Builder gpu(String g) {
      gpu = g;
      return this;
    }

    /**
     * Sets tp.
     *
     * @param t tensor-parallel degree
     * @return this builder
     */
    public Builder tp(int t) {
      tp = t;
      return this;
    }

    /**
     * Sets latencyModel.
     *
     * @param n latency model provider name (built in or a plugin's)
     * @return this builder
     */
    public Builder latencyModel(String n) {
      latencyModel = n;
      return this;
    }

    /**
     * Sets coefficients.
     *
     * @param c coefficient file or inline list
     * @return this builder
     */
    public Builder coefficients(String c) {
      coefficients = c;
      return this;
    }

    /**
     * Sets maxNumSeqs.
     *
     * @param n vLLM --max-num-seqs
     * @return this builder
     */
    public Builder maxNumSeqs(int n) {
      maxNumSeqs = n;
      return this;
    }

    /**
     * Sets maxNumBatchedTokens.
     *
     * @param n vLLM --max-num-batched-tokens
     * @return this builder
     */
    public Builder maxNumBatchedTokens(int n) {
      maxNumBatchedTokens = n;
      return this;
    }

    /**
     * Sets longPrefillTokenThreshold.
     *
     * @param n vLLM --long-prefill-token-threshold
     * @return this builder
     */
    public Builder longPrefillTokenThreshold(int n) {
      longPrefillTokenThreshold = n;
      return this;
    }

    /**
     * Sets maxModelLen.
     *
     * @param n vLLM --max-model-len (0 = unlimited)
     * @return this builder
     */
    public Builder maxModelLen(int n) {
      maxModelLen = n;
      return this;
    }

    /**
     * Sets blockSize.
     *
     * @param n tokens per KV block
     * @return this builder
     */
    public Builder blockSize(int n) {
      blockSize = n;
      return this;
    }

    /**
     * Sets totalKvBlocks.
     *
     * @param n GPU KV blocks (instead of computing them from memory)
     * @return this builder
     */
    public Builder totalKvBlocks(long n) {
      totalKvBlocks = n;
      return this;
    }

    /**
     * Sets gpuMemoryUtilization.
     *
     * @param u vLLM --gpu-memory-utilization, in (0, 1]
     * @return this builder
     */
    public Builder gpuMemoryUtilization(double u) {
      gpuMemoryUtilization = u;
      return this;
    }

    /**
     * Sets pp.
     *
     * @param n pipeline-parallel degree
     * @return this builder
     */
    public Builder pp(int n) {
      pp = n;
      return this;
    }

    /**
     * Sets dp.
     *
     * @param n data-parallel degree
     * @return this builder
     */
    public Builder dp(int n) {
      dp = n;
      return this;
    }

    /**
     * Sets ep.
     *
     * @param n expert-parallel degree, or {@link #EP_ENABLED}
     * @return this builder
     */
    public Builder ep(int n) {
      ep = n;
      return this;
    }

    /**
     * Sets role.
     *
     * @param r prefill, decode or both (prefill/decode disaggregation)
     * @return this builder
     */
    public Builder role(String r) {
      role = r;
      return this;
    }

    /**
     * The spec, checked as its constructor checks it.
     *
     * @return the pool spec
     * @throws IllegalArgumentException naming the first field out of range
     */
    public PoolSpec build() {
      return new PoolSpec(name, instances, model, gpu, tp, latencyModel, coefficients, maxNumSeqs,
          maxNumBatchedTokens, longPrefillTokenThreshold, maxModelLen, blockSize, totalKvBlocks,
          gpuMemoryUtilization, pp, dp, ep, role);
    }
  }
}
