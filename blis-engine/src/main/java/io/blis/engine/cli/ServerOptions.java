package io.blis.engine.cli;

import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The flags that describe one vLLM server (a picocli mixin): model, GPU, tensor parallelism and
 * the limits vLLM was launched with. {@code blis run}, {@code replay} and {@code serve} simulate
 * such a server; {@code blis observe} records them beside what it measured of a real one.
 */
final class ServerOptions {

  @Option(names = "--model", paramLabel = "NAME|CONFIG_JSON",
      description = "Bundled model name or alias, or a HuggingFace config.json path (default: ${DEFAULT-VALUE};"
          + " observe: the served model when it is a bundled one).")
  String model = DeploymentOptions.DEFAULT_MODEL;

  @Option(names = {"--gpu", "--hardware"}, paramLabel = "NAME|JSON",
      description = "Bundled GPU name or alias, a device name as nvidia-smi prints it (NVIDIA A100-SXM4-40GB),"
          + " a GPU JSON file, or FILE#KEY for one entry of a file of several GPUs (default: ${DEFAULT-VALUE}).")
  String gpu = DeploymentOptions.DEFAULT_GPU;

  @Option(names = "--tp", description = "Tensor-parallel degree (default: ${DEFAULT-VALUE}).")
  int tp = 1;

  @Option(names = {"--max-num-seqs", "--max-num-running-reqs"},
      description = "Maximum running requests (default: ${DEFAULT-VALUE}).")
  int maxNumSeqs = 256;

  @Option(names = {"--max-num-batched-tokens", "--max-num-scheduled-tokens"},
      description = "Token budget per step (default: ${DEFAULT-VALUE}).")
  int maxNumBatchedTokens = 2048;

  @Option(names = {"--block-size", "--block-size-in-tokens"},
      description = "Tokens per KV block (default: ${DEFAULT-VALUE}).")
  int blockSize = 16;

  @Option(names = "--total-kv-blocks",
      description = "GPU KV blocks (default: computed from model, GPU, TP and memory utilization).")
  Long totalKvBlocks;

  @Option(names = "--max-model-len",
      description = "Maximum prompt + output tokens, 0 = unlimited (default: the model's context, capped by the KV cache).")
  Integer maxModelLen;

  @Option(names = "--gpu-memory-utilization",
      description = "Fraction of GPU memory vLLM may use (default: ${DEFAULT-VALUE}).")
  double gpuMemoryUtilization = 0.9;

  /** Checks the values; a bad one is a {@link CommandLine.ParameterException} of {@code cl}. */
  void validate(CommandLine cl) {
    require(cl, tp >= 1, "--tp must be at least 1, got " + tp);
    require(cl, maxNumSeqs >= 1, "--max-num-seqs must be at least 1, got " + maxNumSeqs);
    require(cl, maxNumBatchedTokens >= 1, "--max-num-batched-tokens must be at least 1, got " + maxNumBatchedTokens);
    require(cl, blockSize >= 1, "--block-size must be at least 1, got " + blockSize);
    require(cl, totalKvBlocks == null || totalKvBlocks >= 1, "--total-kv-blocks must be at least 1, got " + totalKvBlocks);
    require(cl, maxModelLen == null || maxModelLen >= 0, "--max-model-len must be >= 0, got " + maxModelLen);
    require(cl, gpuMemoryUtilization > 0 && gpuMemoryUtilization <= 1,
        "--gpu-memory-utilization must be in (0, 1], got " + gpuMemoryUtilization);
  }

  private static void require(CommandLine cl, boolean ok, String message) {
    DeploymentOptions.require(cl, ok, message);
  }
}
