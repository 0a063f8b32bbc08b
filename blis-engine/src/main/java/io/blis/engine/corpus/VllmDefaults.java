package io.blis.engine.corpus;

import io.blis.api.HardwareSpec;
import io.blis.engine.cluster.VllmVersion;

/**
 * The scheduler limits a vLLM release uses when its user sets none, by engine, usage (the offline
 * {@code LLM} class of the latency and throughput benchmarks, or the OpenAI-compatible server) and
 * GPU, as vLLM's engine arguments choose them:
 *
 * <ul>
 *   <li>V0: 256 sequences; chunked prefill off (the default for contexts up to 32K tokens), so one
 *       step prefills whole prompts up to {@code max(max_model_len, 2048)} tokens;
 *   <li>V1 before 0.9: 256 sequences, 8192 tokens a step offline and 2048 behind the server;
 *   <li>V1 from 0.9: on GPUs of 70 GiB or more other than the A100, 1024 sequences and 16384 /
 *       8192 tokens; elsewhere 256 and 8192 / 2048.
 * </ul>
 */
public final class VllmDefaults {

  /** The first release with the larger defaults on 70 GiB GPUs. */
  static final VllmVersion LARGE_GPU_DEFAULTS = VllmVersion.parse("0.9.0");

  private VllmDefaults() {}

  /** Default {@code max_num_seqs}. */
  public static int maxNumSeqs(VllmVersion version, boolean v1, HardwareSpec gpu) {
    return v1 && largeGpu(version, gpu) ? 1024 : 256;
  }

  /**
   * Default {@code max_num_batched_tokens}; for V0 without chunked prefill, {@code
   * max(maxModelLen, 2048)}.
   */
  public static int maxNumBatchedTokens(VllmVersion version, boolean v1, boolean online, HardwareSpec gpu,
      int maxModelLen) {
    if (!v1) {
      return Math.max(maxModelLen, 2048);
    }
    if (largeGpu(version, gpu)) {
      return online ? 8192 : 16384;
    }
    return online ? 2048 : 8192;
  }

  private static boolean largeGpu(VllmVersion version, HardwareSpec gpu) {
    return version.compareTo(LARGE_GPU_DEFAULTS) >= 0 && gpu.memoryBytes() >= 70L * (1L << 30)
        && !gpu.name().toUpperCase(java.util.Locale.ROOT).startsWith("A100");
  }
}
