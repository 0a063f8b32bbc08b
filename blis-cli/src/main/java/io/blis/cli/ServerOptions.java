package io.blis.cli;

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

  @Option(names = "--model-config-folder", paramLabel = "DIR",
      description = "Go BLIS: a folder holding the model's HuggingFace config.json; the same as --model DIR/config.json.")
  java.nio.file.Path modelConfigFolder;

  @Option(names = "--hardware-config", paramLabel = "FILE",
      description = "Go BLIS: its hardware_config.json (GPUs keyed by name); --hardware NAME (default ${DEFAULT-VALUE} as for"
          + " --gpu) picks the entry: the same as --gpu FILE#NAME.")
  java.nio.file.Path hardwareConfig;

  @Option(names = "--tp", description = "Tensor-parallel degree (default: ${DEFAULT-VALUE}).")
  int tp = 1;

  @Option(names = {"--pp", "--pipeline-parallel-size"},
      description = "Pipeline-parallel stages, each of --tp GPUs (default: ${DEFAULT-VALUE}).")
  int pp = 1;

  @Option(names = {"--dp", "--data-parallel-size"},
      description = "Data-parallel ranks, each its own scheduler, batch and KV cache; an MoE model's ranks step"
          + " together (default: ${DEFAULT-VALUE}).")
  int dp = 1;

  @Option(names = "--ep", paramLabel = "N",
      description = "Expert-parallel degree of an MoE model: 1 (experts split tensor-parallel) or tp x dp (whole"
          + " experts spread over every GPU, as --enable-expert-parallel) (default: 1).")
  Integer epDegree;

  @Option(names = "--enable-expert-parallel",
      description = "vLLM's flag: spread an MoE model's experts over all tp x dp GPUs (the same as --ep tp x dp).")
  boolean enableExpertParallel;

  /** The expert-parallel degree the flags give: 1, tp x dp, or {@link PoolSpec#EP_ENABLED}. */
  int ep() {
    return enableExpertParallel ? io.blis.engine.cluster.PoolSpec.EP_ENABLED : resolvedEp();
  }

  /** The expert-parallel degree the flags give, resolved: 1 or tp x dp. */
  int resolvedEp() {
    return enableExpertParallel ? tp * dp : epDegree == null ? 1 : epDegree;
  }

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

  /** Whether the model was given, by --model or --model-config-folder. */
  static boolean modelGiven(CommandLine.ParseResult p) {
    return p.hasMatchedOption("--model") || p.hasMatchedOption("--model-config-folder");
  }

  /** Whether the GPU was given, by --gpu (--hardware) or --hardware-config. */
  static boolean gpuGiven(CommandLine.ParseResult p) {
    return p.hasMatchedOption("--gpu") || p.hasMatchedOption("--hardware-config");
  }

  /**
   * Resolves Go BLIS's --model-config-folder and --hardware-config into --model and --gpu (once);
   * returns one note per field of the chosen hardware_config.json entry that has no meaning here.
   */
  java.util.List<String> resolveGoBlisFiles(CommandLine cl) {
    java.util.List<String> notes = new java.util.ArrayList<>();
    if (modelConfigFolder != null) {
      java.nio.file.Path config = modelConfigFolder.resolve("config.json");
      require(cl, java.nio.file.Files.isDirectory(modelConfigFolder),
          "--model-config-folder: '" + modelConfigFolder + "' is not a directory (expected a folder with config.json)");
      require(cl, java.nio.file.Files.isRegularFile(config),
          "--model-config-folder: no config.json in '" + modelConfigFolder + "' (the model's HuggingFace config)");
      require(cl, !cl.getParseResult().hasMatchedOption("--model") || model.equals(config.toString())
              || !model.endsWith(".json"),
          "give --model CONFIG_JSON or --model-config-folder DIR, not both");
      model = config.toString();
      modelConfigFolder = null;
    }
    if (hardwareConfig != null) {
      Cli.requireFile("--hardware-config", hardwareConfig);
      require(cl, !gpu.contains("#") && !gpu.endsWith(".json"),
          "with --hardware-config FILE, --hardware names an entry of FILE (H100, A100-80, ...), got '" + gpu + "'");
      notes.addAll(goHardwareNotes(hardwareConfig, gpu));
      gpu = hardwareConfig + "#" + gpu;
      hardwareConfig = null;
    }
    return notes;
  }

  /** Go BLIS hardware_config.json keys that are not GPU datasheet figures. */
  private static java.util.List<String> goHardwareNotes(java.nio.file.Path file, String entry) {
    java.util.List<String> notes = new java.util.ArrayList<>();
    try {
      com.fasterxml.jackson.databind.JsonNode root = new com.fasterxml.jackson.databind.ObjectMapper()
          .readTree(java.nio.file.Files.readString(file));
      com.fasterxml.jackson.databind.JsonNode e = root == null ? null : root.get(entry);
      if (e != null && e.isObject()) {
        for (String k : java.util.List.of("mfuPrefill", "mfuDecode")) {
          if (e.has(k)) {
            notes.add(file + " (" + entry + "): " + k + " has no meaning here: it is not a datasheet figure;"
                + " the roofline's efficiencies are coefficients (--coefficients), trained physics has none");
          }
        }
      }
    } catch (java.io.IOException | RuntimeException e) {
      // the GPU reader reports what is wrong with the file
    }
    return notes;
  }

  /** Checks the values; a bad one is a {@link CommandLine.ParameterException} of {@code cl}. */
  void validate(CommandLine cl) {
    Cli.printNotes(cl, resolveGoBlisFiles(cl));
    require(cl, tp >= 1, "--tp must be at least 1, got " + tp);
    require(cl, pp >= 1, "--pp must be at least 1, got " + pp);
    require(cl, dp >= 1, "--dp must be at least 1, got " + dp);
    require(cl, (long) tp * pp * dp <= io.blis.latency.layout.Layout.MAX_GPUS, "--tp x --pp x --dp must be at most "
        + io.blis.latency.layout.Layout.MAX_GPUS + " GPUs, got " + ((long) tp * pp * dp));
    require(cl, epDegree == null || epDegree == 1 || epDegree == tp * dp,
        "--ep must be 1 or --tp x --dp = " + tp * dp + " (vLLM spreads the experts over every GPU of the"
            + " instance's tensor- and data-parallel ranks), got " + epDegree);
    require(cl, !enableExpertParallel || epDegree == null || epDegree == tp * dp,
        "--enable-expert-parallel means --ep " + tp * dp + "; drop --ep " + epDegree);
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
