package io.blis.engine.validate;

import com.fasterxml.jackson.databind.JsonNode;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.GpuSpec;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.latency.coeff.InputTrees;
import io.blis.workload.inferenceperf.InferencePerfProfile;
import io.blis.workload.inferenceperf.InferencePerfProfiles;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Reads a file with the schema of the ground-truth {@code experiments.json}: a top-level
 * {@code experiments} array whose entries give the model, hardware, vLLM limits, the effective
 * inference-perf workload, the status and the observed metrics. Paths inside (model config,
 * per-request trace) are relative to the file. Every missing or invalid field fails with one
 * message naming the file, the experiment id and the field.
 */
public final class ExperimentsFile {

  private ExperimentsFile() {}

  /**
   * Parses the file.
   *
   * @throws IllegalArgumentException if the file cannot be read (no such file, a directory, no
   *     permission), is not JSON, or a field is missing or invalid
   */
  public static List<Experiment> read(Path file) {
    JsonNode root = InputTrees.json(InputTrees.readText(file, "experiments file"), file.toString());
    if (root == null) {
      throw new IllegalArgumentException(file + ": the experiments file is empty; expected a top-level"
          + " 'experiments' array");
    }
    if (!root.path("experiments").isArray()) {
      throw new IllegalArgumentException(file + ": expected a top-level 'experiments' array");
    }
    Path base = file.toAbsolutePath().getParent();
    List<Experiment> out = new ArrayList<>();
    Set<String> ids = new HashSet<>();
    int index = 0;
    for (JsonNode node : root.get("experiments")) {
      String where = file + ": experiments[" + index + "]";
      Fields f = new Fields(where, node);
      String id = f.text("id");
      f = new Fields(file + ": experiment '" + InputTrees.quote(id) + "'", node);
      if (!ids.add(id)) {
        throw new IllegalArgumentException(file + ": duplicate experiment id '" + InputTrees.quote(id) + "'");
      }
      out.add(parse(f, base));
      index++;
    }
    if (out.isEmpty()) {
      throw new IllegalArgumentException(file + ": the 'experiments' array is empty");
    }
    return List.copyOf(out);
  }

  private static Experiment parse(Fields f, Path base) {
    String id = f.text("id");
    String model = f.text("model");
    Path modelConfig = f.has("model_config") ? base.resolve(f.text("model_config")).normalize() : null;
    if (modelConfig == null) {
      try {
        ModelCatalog.byName(model);
      } catch (IllegalArgumentException e) {
        throw f.error("model_config", "missing, and the model is not bundled: " + e.getMessage());
      }
    }
    String gpu = gpuReference(f, base);
    int tp = f.positiveInt("tp");
    int dp = f.has("dp") ? f.positiveInt("dp") : 1;
    int pp = f.has("pp") ? f.positiveInt("pp") : 1;
    int ep = f.has("ep") ? f.positiveInt("ep") : 1;
    try {
      new io.blis.latency.layout.Layout(tp, pp, dp, ep);
    } catch (IllegalArgumentException e) {
      throw f.error("ep", e.getMessage());
    }
    int maxModelLen = f.positiveInt("vllm.max_model_len");
    int maxBatched = f.positiveInt("vllm.max_num_batched_tokens");
    int maxSeqs = f.positiveInt("vllm.max_num_seqs");
    double gmu = f.has("vllm.gpu_memory_utilization") ? f.fraction("vllm.gpu_memory_utilization") : 0.9;
    int blockSize = f.has("vllm.block_size") ? f.positiveInt("vllm.block_size") : 16;
    long kvBlocks = f.has("vllm.kv_blocks_gpu") ? f.positiveLong("vllm.kv_blocks_gpu") : -1;
    long cpuBytes = 0;
    if (f.has("vllm.cpu_offload") && f.bool("vllm.cpu_offload.enabled")) {
      cpuBytes = f.positiveLong("vllm.cpu_offload.cpu_bytes");
    }
    String workloadName = f.has("workload.name") ? f.text("workload.name") : "";
    Optional<Path> workloadTrace = f.has("workload.trace")
        ? Optional.of(base.resolve(f.text("workload.trace")).normalize())
        : Optional.empty();
    InferencePerfProfile profile = null;
    if (workloadTrace.isEmpty() || f.has("workload.data")) {
      com.fasterxml.jackson.databind.node.ObjectNode w = f.node("workload").deepCopy();
      w.remove("trace");
      profile = InferencePerfProfiles.parse(w.toString(), f.where() + ": field 'workload'");
    }
    int outputLen = profile == null ? 0 : profile.data().outputLen();
    boolean saturated = f.has("status.saturated") && f.bool("status.saturated");
    RunStats overall = observed(f.child("observed.overall", f.node("observed.overall")), -1, outputLen);
    List<RunStats> stageStats = new ArrayList<>();
    if (f.has("observed.stages")) {
      JsonNode arr = f.array("observed.stages");
      for (int i = 0; i < arr.size(); i++) {
        Fields s = f.child("observed.stages[" + i + "]", arr.get(i));
        int stage = s.has("stage") ? s.nonNegativeInt("stage") : i;
        stageStats.add(observed(s, stage, outputLen));
      }
    }
    Optional<Path> trace = f.has("per_request_trace")
        ? Optional.of(base.resolve(f.text("per_request_trace")).normalize())
        : Optional.empty();
    return new Experiment(id, model, modelConfig, gpu, tp, dp, maxModelLen, maxBatched, maxSeqs,
        gmu, blockSize, kvBlocks, cpuBytes, workloadName, profile, saturated,
        new RunSummary(overall, stageStats), trace, workloadTrace, pp, ep);
  }

  /**
   * The GPU of an experiment as a reference {@link GpuCatalog#resolve} takes. In this order: the
   * recorded {@code hardware.gpu} if it is a bundled name or alias; the key of
   * {@code hardware.spec} ({@code FILE#KEY}, FILE relative to the experiments file) if that is
   * one; the bundled GPU that {@code hardware.gpu} describes ({@code NVIDIA A100-SXM4-40GB});
   * else the {@code hardware.spec} entry itself, read from its file.
   */
  private static String gpuReference(Fields f, Path base) {
    String name = f.text("hardware.gpu");
    if (GpuCatalog.lookup(name).isPresent()) {
      return name;
    }
    String spec = f.has("hardware.spec") ? f.text("hardware.spec") : null;
    int hash = spec == null ? -1 : spec.lastIndexOf('#');
    String key = hash < 0 ? "" : spec.substring(hash + 1);
    if (!key.isEmpty() && GpuCatalog.lookup(key).isPresent()) {
      return key;
    }
    Optional<GpuSpec> described = GpuCatalog.describedBy(name);
    if (described.isPresent()) {
      return described.get().name();
    }
    if (spec == null) {
      throw f.error("hardware.gpu", "unknown GPU '" + name + "'; bundled GPUs: "
          + String.join(", ", GpuCatalog.names())
          + "; for another GPU add 'hardware.spec': FILE#KEY naming an entry of a GPU file"
          + " (bf16_dense_tflops, hbm_bandwidth_tb_s, memory_gib or memory_gb)");
    }
    String file = base.resolve(hash < 0 ? spec : spec.substring(0, hash)).normalize().toString();
    String ref = hash < 0 ? file : file + "#" + key;
    try {
      GpuCatalog.resolve(ref);
    } catch (IllegalArgumentException e) {
      throw f.error("hardware.spec", "GPU '" + name + "' is not bundled and its spec cannot be used: "
          + e.getMessage());
    }
    return ref;
  }

  private static RunStats observed(Fields s, int stage, int outputLen) {
    double e2eMean = s.nonNegative("e2e_ms.mean");
    double ttftMean = s.nonNegative("ttft_ms.mean");
    double decode = s.has("derived.decode_ms_per_token_est")
        ? s.nonNegative("derived.decode_ms_per_token_est")
        : RunStats.decodeMsPerToken(e2eMean, ttftMean, outputLen);
    // Counts are optional (summary-only runs record latencies but not counts); unknown = -1.
    long success = s.has("count_success") ? s.nonNegativeLong("count_success") : RunStats.UNKNOWN_COUNT;
    long failed = s.has("count_failed") ? s.nonNegativeLong("count_failed")
        : success == RunStats.UNKNOWN_COUNT ? RunStats.UNKNOWN_COUNT : 0;
    return new RunStats(
        stage,
        success,
        failed,
        e2eMean,
        s.optional("e2e_ms.p50"),
        s.optional("e2e_ms.p90"),
        s.optional("e2e_ms.p99"),
        ttftMean,
        s.optional("ttft_ms.p50"),
        s.optional("ttft_ms.p90"),
        s.optional("ttft_ms.p99"),
        decode,
        s.optional("throughput.requests_per_s"));
  }

  /** Typed access to dotted field paths with errors that name the context and the field. */
  private record Fields(String where, JsonNode root) {

    Fields child(String path, JsonNode node) {
      return new Fields(where + ": " + path, node);
    }

    IllegalArgumentException error(String path, String expectation) {
      // the expectation may quote a value of the file, line breaks and all
      return new IllegalArgumentException(where + ": field '" + path + "': " + InputTrees.oneLine(expectation));
    }

    JsonNode lookup(String path) {
      JsonNode n = root;
      for (String part : path.split("\\.")) {
        if (n == null || !n.isObject()) {
          return null;
        }
        n = n.get(part);
      }
      return n == null || n.isNull() ? null : n;
    }

    boolean has(String path) {
      return lookup(path) != null;
    }

    JsonNode node(String path) {
      JsonNode n = lookup(path);
      if (n == null || !n.isObject()) {
        throw error(path, n == null ? "missing (expected an object)" : "expected an object");
      }
      return n;
    }

    JsonNode array(String path) {
      JsonNode n = lookup(path);
      if (n == null || !n.isArray() || n.isEmpty()) {
        throw error(path, n == null ? "missing (expected a non-empty array)" : "expected a non-empty array");
      }
      return n;
    }

    String text(String path) {
      JsonNode n = lookup(path);
      if (n == null || !n.isTextual() || n.asText().isBlank()) {
        throw error(path, n == null ? "missing (expected a non-empty string)" : "expected a non-empty string, got " + n);
      }
      return n.asText();
    }

    boolean bool(String path) {
      JsonNode n = lookup(path);
      if (n == null || !n.isBoolean()) {
        throw error(path, n == null ? "missing (expected true or false)" : "expected true or false, got " + n);
      }
      return n.asBoolean();
    }

    double number(String path) {
      JsonNode n = lookup(path);
      if (n == null || !n.isNumber() || !Double.isFinite(n.asDouble())) {
        throw error(path, n == null ? "missing (expected a number)" : "expected a finite number, got " + n);
      }
      return n.asDouble();
    }

    double optional(String path) {
      return has(path) ? nonNegative(path) : Double.NaN;
    }

    double nonNegative(String path) {
      double v = number(path);
      if (v < 0) {
        throw error(path, "expected a number >= 0, got " + v);
      }
      return v;
    }

    double fraction(String path) {
      double v = number(path);
      if (!(v > 0 && v <= 1)) {
        throw error(path, "expected a fraction in (0, 1], got " + v);
      }
      return v;
    }

    long integer(String path) {
      JsonNode n = lookup(path);
      if (n == null || !n.isIntegralNumber()) {
        throw error(path, n == null ? "missing (expected an integer)" : "expected an integer, got " + n);
      }
      return n.asLong();
    }

    int positiveInt(String path) {
      long v = integer(path);
      if (v < 1 || v > Integer.MAX_VALUE) {
        throw error(path, "expected a positive integer, got " + v);
      }
      return (int) v;
    }

    int nonNegativeInt(String path) {
      long v = integer(path);
      if (v < 0 || v > Integer.MAX_VALUE) {
        throw error(path, "expected an integer >= 0, got " + v);
      }
      return (int) v;
    }

    long positiveLong(String path) {
      long v = integer(path);
      if (v < 1) {
        throw error(path, "expected a positive integer, got " + v);
      }
      return v;
    }

    long nonNegativeLong(String path) {
      long v = integer(path);
      if (v < 0) {
        throw error(path, "expected an integer >= 0, got " + v);
      }
      return v;
    }
  }
}
