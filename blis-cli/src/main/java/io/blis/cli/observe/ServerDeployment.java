package io.blis.cli.observe;

import io.blis.api.ModelSpec;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.GpuSpec;
import io.blis.latency.catalog.ModelCatalog;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The deployment of an observed server as an experiments entry records it: what a simulation needs
 * to predict the same run (model, GPU, TP, vLLM's limits, the KV cache), each value with where it
 * came from. A client sees little of a server, so most of it is what the user declares; the rest
 * comes from the server ({@code /v1/models}: max_model_len; {@code /metrics}: block size, GPU
 * blocks, memory utilization; {@code /version}) or from defaults, marked as such.
 *
 * @param model the model's name (a bundled model's HF name, or the served name)
 * @param modelConfig the model's {@code config.json} when it is not bundled, else null
 * @param gpu the GPU: a bundled name, or the name of the GPU a file describes
 * @param gpuFile the GPU file ({@code FILE} or {@code FILE#KEY}) when the GPU is not bundled, else
 *     null
 * @param tp tensor-parallel degree
 * @param maxModelLen vLLM's {@code max_model_len}
 * @param maxNumBatchedTokens vLLM's {@code max_num_batched_tokens}
 * @param maxNumSeqs vLLM's {@code max_num_seqs}
 * @param gpuMemoryUtilization vLLM's {@code gpu_memory_utilization}
 * @param blockSize KV block size, tokens
 * @param kvBlocksGpu GPU KV blocks, -1 when unknown (a simulation computes them from memory)
 * @param cpuOffloadBytes CPU KV offload capacity, bytes (0: none)
 * @param vllmVersion the server's version, null when unknown
 * @param sources where each value came from, by field name
 * @param simulatable whether a simulation can use the model (bundled, or a config given)
 * @param pp pipeline-parallel stages
 * @param dp data-parallel ranks
 * @param ep expert-parallel degree (1, or tp x dp)
 */
public record ServerDeployment(String model, Path modelConfig, String gpu, String gpuFile, int tp,
    int maxModelLen, int maxNumBatchedTokens, int maxNumSeqs, double gpuMemoryUtilization,
    int blockSize, long kvBlocksGpu, long cpuOffloadBytes, String vllmVersion,
    Map<String, String> sources, boolean simulatable, int pp, int dp, int ep) {

  /** vLLM-like defaults of the limits the client cannot see (blis run's defaults). */
  public static final int DEFAULT_MAX_NUM_SEQS = 256;
  public static final int DEFAULT_MAX_NUM_BATCHED_TOKENS = 2048;
  public static final int DEFAULT_BLOCK_SIZE = 16;
  public static final double DEFAULT_GPU_MEMORY_UTILIZATION = 0.9;
  public static final String DEFAULT_GPU = "H100";
  /** The largest block size and GPU block count taken from a server's metrics (beyond: not a real server's). */
  static final double MAX_BLOCK_SIZE = 1 << 20;
  static final double MAX_GPU_BLOCKS = 1L << 40;

  public ServerDeployment {
    sources = Map.copyOf(sources);
  }

  /**
   * What the user says of the server; null where they say nothing.
   *
   * @param model a bundled model name or alias, or a {@code config.json} path (or a directory
   *     holding one)
   * @param gpu a bundled GPU name or alias, a device name as nvidia-smi prints it, a GPU file or
   *     {@code FILE#KEY}
   */
  public record Declared(String model, String gpu, Integer tp, Integer maxModelLen,
      Integer maxNumBatchedTokens, Integer maxNumSeqs, Double gpuMemoryUtilization,
      Integer blockSize, Long kvBlocksGpu, Long cpuOffloadBytes, String vllmVersion,
      Integer pp, Integer dp, Integer ep) {

    /** Without pipeline, data or expert parallelism declared. */
    public Declared(String model, String gpu, Integer tp, Integer maxModelLen,
        Integer maxNumBatchedTokens, Integer maxNumSeqs, Double gpuMemoryUtilization,
        Integer blockSize, Long kvBlocksGpu, Long cpuOffloadBytes, String vllmVersion) {
      this(model, gpu, tp, maxModelLen, maxNumBatchedTokens, maxNumSeqs, gpuMemoryUtilization, blockSize,
          kvBlocksGpu, cpuOffloadBytes, vllmVersion, null, null, null);
    }

    /** Nothing declared. */
    public static Declared none() {
      return new Declared(null, null, null, null, null, null, null, null, null, null, null);
    }
  }

  /**
   * Checks that a declared model and GPU can be resolved, before anything is sent.
   *
   * @throws IllegalArgumentException naming the flag, as {@link #resolve} would
   */
  public static void check(Declared d) {
    resolve(d, new ServerInfo(java.util.List.of(), -1, null, Map.of(), false, 0, 1.0, java.util.List.of()), "");
  }

  /**
   * The deployment from what was declared, then what the server told, then defaults.
   *
   * @param servedModel the name the server answers to (tried as a bundled model when no model is
   *     declared)
   * @throws IllegalArgumentException if a declared model or GPU cannot be resolved (the message
   *     names the flag)
   */
  public static ServerDeployment resolve(Declared d, ServerInfo info, String servedModel) {
    Map<String, String> src = new LinkedHashMap<>();
    String model;
    Path modelConfig = null;
    ModelSpec spec = null;
    boolean simulatable = true;
    if (d.model() != null) {
      Path file = configFile(d.model());
      try {
        spec = ModelCatalog.resolve(d.model());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("--model: " + e.getMessage(), e);
      }
      model = spec.name();
      modelConfig = file;
      src.put("model", file != null ? "--model (config file)" : "--model");
    } else {
      try {
        spec = ModelCatalog.byName(servedModel);
        model = spec.name();
        src.put("model", "served model name (a bundled model)");
      } catch (IllegalArgumentException notBundled) {
        model = servedModel;
        simulatable = false;
        src.put("model", "served model name (not bundled: give --model CONFIG_JSON to simulate it)");
      }
    }
    String gpu;
    String gpuFile = null;
    if (d.gpu() != null) {
      GpuSpec g;
      try {
        g = GpuCatalog.resolve(d.gpu());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("--gpu: " + e.getMessage(), e);
      }
      boolean bundled = GpuCatalog.lookup(d.gpu()).isPresent() || GpuCatalog.describedBy(d.gpu()).isPresent();
      gpu = g.name();
      gpuFile = bundled ? null : d.gpu();
      src.put("gpu", "--gpu");
    } else {
      gpu = DEFAULT_GPU;
      src.put("gpu", "assumed (not given; give --gpu)");
    }
    int tp = pick(d.tp(), 1, "tp", "--tp", src);
    int pp = pick(d.pp(), 1, "pp", "--pp", src);
    int dp = pick(d.dp(), 1, "dp", "--dp", src);
    int ep = pick(d.ep(), 1, "ep", "--ep", src);
    int maxModelLen;
    if (d.maxModelLen() != null && d.maxModelLen() > 0) {
      maxModelLen = d.maxModelLen();
      src.put("max_model_len", "--max-model-len");
    } else if (info.maxModelLen() > 0) {
      maxModelLen = info.maxModelLen();
      src.put("max_model_len", "GET /v1/models");
    } else if (spec != null) {
      maxModelLen = spec.maxPositionEmbeddings();
      src.put("max_model_len", "the model's context (not given, and the server did not say)");
    } else {
      maxModelLen = 4096;
      src.put("max_model_len", "assumed 4096 (not given, and the server did not say)");
    }
    int batched = pick(d.maxNumBatchedTokens(), DEFAULT_MAX_NUM_BATCHED_TOKENS, "max_num_batched_tokens",
        "--max-num-batched-tokens", src);
    int seqs = pick(d.maxNumSeqs(), DEFAULT_MAX_NUM_SEQS, "max_num_seqs", "--max-num-seqs", src);
    double gmu = declaredOrServer(d.gpuMemoryUtilization(), "--gpu-memory-utilization",
        info.cacheConfigDouble("gpu_memory_utilization"), v -> v > 0 && v <= 1,
        DEFAULT_GPU_MEMORY_UTILIZATION, "default", "gpu_memory_utilization", src);
    // the server's labels count only as whole numbers in range: never a value cast into garbage
    int block = (int) declaredOrServer(d.blockSize(), "--block-size", info.cacheConfigDouble("block_size"),
        v -> v >= 1 && v <= MAX_BLOCK_SIZE && v == Math.rint(v), DEFAULT_BLOCK_SIZE, "default", "block_size", src);
    long blocks = (long) declaredOrServer(d.kvBlocksGpu(), "--total-kv-blocks",
        info.cacheConfigDouble("num_gpu_blocks"), v -> v >= 1 && v <= MAX_GPU_BLOCKS && v == Math.rint(v), -1,
        "unknown (a simulation computes them from the GPU's memory)", "kv_blocks_gpu", src);
    long cpu = d.cpuOffloadBytes() == null ? 0 : d.cpuOffloadBytes();
    src.put("cpu_offload", d.cpuOffloadBytes() == null ? "none (not given)" : "--kv-offloading-size-gib");
    String version = d.vllmVersion() != null ? d.vllmVersion() : info.version();
    src.put("version", d.vllmVersion() != null ? "--vllm-version" : info.version() != null ? "GET /version" : "unknown");
    return new ServerDeployment(model, modelConfig, gpu, gpuFile, tp, maxModelLen, batched, seqs, gmu,
        block, blocks, cpu, version, src, simulatable, pp, dp, ep);
  }

  /**
   * A value declared by {@code flag}, else the server's {@code vllm:cache_config_info} label when
   * {@code valid}, else {@code fallback}; notes in {@code src} where it came from.
   */
  private static double declaredOrServer(Number declared, String flag, double fromServer,
      java.util.function.DoublePredicate valid, double fallback, String fallbackSource, String field,
      Map<String, String> src) {
    if (declared != null) {
      src.put(field, flag);
      return declared.doubleValue();
    }
    if (valid.test(fromServer)) {
      src.put(field, "/metrics vllm:cache_config_info");
      return fromServer;
    }
    src.put(field, fallbackSource);
    return fallback;
  }

  private static int pick(Integer declared, int fallback, String field, String flag, Map<String, String> src) {
    if (declared != null) {
      src.put(field, flag);
      return declared;
    }
    src.put(field, "default " + fallback + " (not given; give " + flag + " as the server was launched)");
    return fallback;
  }

  /** The config file {@code model} names (a file, or a directory holding config.json), or null. */
  private static Path configFile(String model) {
    try {
      Path p = Path.of(model);
      if (Files.isDirectory(p) && Files.isRegularFile(p.resolve("config.json"))) {
        return p.resolve("config.json");
      }
      return Files.isRegularFile(p) ? p : null;
    } catch (InvalidPathException notAPath) {
      return null;
    }
  }
}
