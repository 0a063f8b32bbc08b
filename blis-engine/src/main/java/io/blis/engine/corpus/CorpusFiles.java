package io.blis.engine.corpus;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.engine.cluster.VllmVersion;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.ModelCatalog;
import io.blis.latency.coeff.InputTrees;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * Reads a corpus folder: every {@code sources/*.yaml} file (one source each) with its points, the
 * source's {@code defaults} applied to each point, models from {@code models/<org>--<name>/config.json}
 * or BLIS's bundled catalog. The format is docs/public-measurements/SCHEMA.md. Every unknown key,
 * missing field or bad value fails with one message naming the file, the point and the key.
 */
public final class CorpusFiles {

  /**
   * One source of the corpus.
   *
   * @param file the file it was read from
   * @param id its id (the split hashes it)
   * @param half its half
   * @param title the publication's title
   * @param url where it was published
   * @param kind pull-request, issue, blog, paper, benchmark-repo, docs or discussion
   * @param published when the numbers were posted
   * @param points its points, in file order
   */
  public record Source(Path file, String id, CorpusHalf half, String title, String url, String kind,
      LocalDate published, List<CorpusPoint> points) {
    public Source {
      points = List.copyOf(points);
    }
  }

  private static final Set<String> SOURCE_KEYS = Set.of("id", "title", "url", "kind", "published", "read_via",
      "vllm", "gpu", "gpu_basis", "defaults", "assumptions", "points", "note", "notes");
  private static final Set<String> KINDS = Set.of("pull-request", "issue", "blog", "paper", "benchmark-repo",
      "docs", "discussion");
  private static final Set<String> POINT_KEYS = Set.of("id", "model", "gpu", "gpu_basis", "tp", "pp", "dp", "ep",
      "benchmark", "client", "batch", "input_tokens", "output_tokens", "num_prompts", "request_rate",
      "burstiness", "max_concurrency", "dataset", "range_ratio", "prefix_len", "mean_input_tokens",
      "mean_output_tokens", "ignore_eos", "server", "command", "measured", "note", "notes", "assumptions",
      "read_from_chart", "vllm", "published", "num_iters", "num_iters_warmup", "headline");
  private static final Set<String> VLLM_KEYS = Set.of("version", "version_basis", "engine");
  private static final Set<String> SERVER_KEYS = Set.of("max_num_seqs", "max_num_batched_tokens", "max_model_len",
      "gpu_memory_utilization", "enable_chunked_prefill", "enable_prefix_caching", "enforce_eager",
      "num_scheduler_steps", "async_scheduling", "quantization", "kv_cache_dtype", "dtype", "compilation",
      "attention_backend", "other");
  /** Scripts of the random dataset from this date spread lengths around the mean (range ratio 0 = fixed). */
  static final LocalDate RANGE_AROUND_MEAN = LocalDate.of(2025, 4, 1);

  private CorpusFiles() {}

  /** Reads every source of the corpus in {@code dir} (its {@code sources} folder), sorted by file name. */
  public static List<Source> read(Path dir) {
    List<Path> files = sourceFiles(dir);
    if (files.isEmpty()) {
      throw new IllegalArgumentException(dir.resolve("sources") + ": no .yaml source files");
    }
    List<Source> out = new ArrayList<>();
    Set<String> ids = new HashSet<>();
    for (Path f : files) {
      Source s = readSource(dir, f);
      if (!ids.add(s.id())) {
        throw new IllegalArgumentException(f + ": source id '" + s.id() + "' is used by another file too");
      }
      out.add(s);
    }
    return List.copyOf(out);
  }

  /**
   * Checks every source file of the corpus in {@code dir} on its own and returns one message per
   * file that cannot be read (empty when all can), so that one bad file does not hide the others.
   */
  public static List<String> check(Path dir) {
    List<Path> files;
    try {
      files = sourceFiles(dir);
    } catch (IllegalArgumentException e) {
      return List.of(e.getMessage());
    }
    List<String> problems = new ArrayList<>();
    for (Path f : files) {
      try {
        readSource(dir, f);
      } catch (IllegalArgumentException e) {
        problems.add(e.getMessage());
      }
    }
    return problems;
  }

  /** The {@code .yaml} files of {@code dir}'s {@code sources} folder, sorted by name. */
  private static List<Path> sourceFiles(Path dir) {
    Path sources = dir.resolve("sources");
    if (!Files.isDirectory(sources)) {
      throw new IllegalArgumentException(dir + ": not a corpus folder (no sources/ folder in it)");
    }
    try (Stream<Path> s = Files.list(sources)) {
      return s.filter(p -> p.getFileName().toString().endsWith(".yaml")).sorted().toList();
    } catch (IOException e) {
      throw new IllegalArgumentException(sources + ": cannot list: " + e.getMessage(), e);
    }
  }

  /** Reads one source file of the corpus in {@code dir}. */
  public static Source readSource(Path dir, Path file) {
    String where = file.toString();
    JsonNode root = InputTrees.yaml(InputTrees.readText(file, "corpus source"), where);
    if (root == null || !root.isObject()) {
      throw new IllegalArgumentException(where + ": expected a mapping with id, url, vllm, points");
    }
    keys(root, SOURCE_KEYS, where);
    String id = text(root, "id", where);
    if (!id.matches("[a-z0-9][a-z0-9-]*")) {
      throw new IllegalArgumentException(where + ": id '" + InputTrees.quote(id)
          + "' must be lower-case letters, digits and dashes");
    }
    String expectedName = id + ".yaml";
    if (!file.getFileName().toString().equals(expectedName)) {
      throw new IllegalArgumentException(where + ": a source's file is named after its id, expected " + expectedName);
    }
    String kind = text(root, "kind", where);
    if (!KINDS.contains(kind)) {
      throw new IllegalArgumentException(where + ": kind '" + InputTrees.quote(kind) + "' must be one of "
          + KINDS.stream().sorted().toList());
    }
    LocalDate published = date(root, "published", where);
    JsonNode vllm = root.get("vllm");
    if (vllm == null || !vllm.isObject()) {
      throw new IllegalArgumentException(where + ": key 'vllm' must be a mapping with version, version_basis, engine");
    }
    keys(vllm, VLLM_KEYS, where + ": vllm");
    JsonNode defaults = root.has("defaults") ? root.get("defaults") : com.fasterxml.jackson.databind.node
        .JsonNodeFactory.instance.objectNode();
    if (!defaults.isObject()) {
      throw new IllegalArgumentException(where + ": key 'defaults' must be a mapping of point fields");
    }
    keys(defaults, POINT_KEYS, where + ": defaults");
    List<String> sourceAssumptions = strings(root, "assumptions", where);
    JsonNode points = root.get("points");
    if (points == null || !points.isArray() || points.isEmpty()) {
      throw new IllegalArgumentException(where + ": key 'points' must be a non-empty list");
    }
    CorpusHalf half = CorpusHalf.of(id);
    List<CorpusPoint> out = new ArrayList<>();
    Set<String> pointIds = new HashSet<>();
    for (int i = 0; i < points.size(); i++) {
      JsonNode p = points.get(i);
      String pw = where + ": points[" + i + "]";
      if (!p.isObject()) {
        throw new IllegalArgumentException(pw + " must be a mapping");
      }
      String pid = text(p, "id", pw);
      pw = where + ": point '" + InputTrees.quote(pid) + "'";
      keys(p, POINT_KEYS, pw);
      if (!pointIds.add(pid)) {
        throw new IllegalArgumentException(pw + ": id used twice in this source");
      }
      ObjectNode merged = ((ObjectNode) defaults).deepCopy();
      if (defaults.has("server") && p.has("server")) {
        ObjectNode server = ((ObjectNode) defaults.get("server")).deepCopy();
        server.setAll((ObjectNode) object(p, "server", pw));
        merged.setAll((ObjectNode) p);
        merged.set("server", server);
      } else {
        merged.setAll((ObjectNode) p);
      }
      out.add(point(dir, id, half, root, vllm, merged, sourceAssumptions, published, pw));
    }
    return new Source(file, id, half, root.path("title").asText(""), text(root, "url", where), kind, published, out);
  }

  private static CorpusPoint point(Path dir, String source, CorpusHalf half, JsonNode root, JsonNode sourceVllm,
      JsonNode p, List<String> sourceAssumptions, LocalDate published, String where) {
    String model = text(p, "model", where);
    Path config;
    try {
      config = dir.resolve("models").resolve(model.replace("/", "--")).resolve("config.json");
    } catch (java.nio.file.InvalidPathException e) {
      throw new IllegalArgumentException(where + ": model '" + InputTrees.quote(model) + "' is not a model name");
    }
    Path modelConfig = Files.isRegularFile(config) ? config : null;
    if (modelConfig == null) {
      try {
        ModelCatalog.byName(model);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(where + ": model '" + InputTrees.quote(model) + "' has no config at "
            + InputTrees.quote(config.toString()) + " and is not a bundled model");
      }
    }
    String gpu = p.has("gpu") ? text(p, "gpu", where) : text(root, "gpu", where);
    if (GpuCatalog.lookup(gpu).isEmpty()) {
      throw new IllegalArgumentException(where + ": gpu '" + InputTrees.quote(gpu) + "' is not in the GPU catalog ("
          + String.join(", ", GpuCatalog.names()) + ")");
    }
    int tp = intOr(p, "tp", 1, 1, 1024, where);
    int pp = intOr(p, "pp", 1, 1, 1024, where);
    int dp = intOr(p, "dp", 1, 1, 1024, where);
    boolean ep = false;
    if (p.has("ep")) {
      JsonNode e = p.get("ep");
      if (e.isBoolean()) {
        ep = e.asBoolean();
      } else if (e.canConvertToInt() && e.isIntegralNumber()) {
        ep = e.asInt() > 1;
        if (ep && e.asInt() != tp * dp) {
          throw new IllegalArgumentException(where + ": ep " + e.asInt() + " must be tp x dp (" + tp * dp
              + "): vLLM spreads experts over every GPU of the deployment");
        }
      } else {
        throw new IllegalArgumentException(where + ": ep must be true, false or a degree, got " + e);
      }
    }
    JsonNode vllm = p.has("vllm") ? p.get("vllm") : sourceVllm;
    if (p.has("vllm")) {
      keys(vllm, VLLM_KEYS, where + ": vllm");
    }
    String versionText = vllm.has("version") ? text(vllm, "version", where + ": vllm")
        : text(sourceVllm, "version", where + ": vllm");
    VllmVersion version;
    try {
      version = VllmVersion.parse(versionText);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(where + ": vllm.version: " + e.getMessage(), e);
    }
    JsonNode engineNode = vllm.has("engine") ? vllm.get("engine") : sourceVllm.get("engine");
    boolean v1;
    if (engineNode == null) {
      v1 = version.v1ByDefault();
    } else if (engineNode.asText().equals("v1") || engineNode.asText().equals("v0")) {
      v1 = engineNode.asText().equals("v1");
    } else {
      throw new IllegalArgumentException(where + ": vllm.engine must be v0 or v1, got " + engineNode);
    }
    Benchmark benchmark;
    try {
      benchmark = Benchmark.parse(text(p, "benchmark", where));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(where + ": benchmark: " + e.getMessage(), e);
    }
    LocalDate date = p.has("published") ? date(p, "published", where) : published;
    CorpusPoint.Workload workload = workload(p, benchmark, date, where);
    CorpusPoint.Server server = server(p, where);
    Map<Measured, Double> measured = new EnumMap<>(Measured.class);
    JsonNode m = object(p, "measured", where);
    for (Iterator<String> it = m.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      Measured key;
      try {
        key = Measured.parse(k);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(where + ": measured: " + e.getMessage(), e);
      }
      JsonNode v = m.get(k);
      if (!v.isNumber() || !(v.asDouble() > 0) || !Double.isFinite(v.asDouble())) {
        throw new IllegalArgumentException(where + ": measured." + k + " must be a number > 0, got " + v);
      }
      measured.put(key, v.asDouble());
    }
    if (measured.isEmpty()) {
      throw new IllegalArgumentException(where + ": measured is empty");
    }
    for (Measured k : measured.keySet()) {
      if (benchmark == Benchmark.LATENCY && !k.key().startsWith("batch_latency")
          && k != Measured.TOKENS_PER_S_PER_REQUEST) {
        throw new IllegalArgumentException(where + ": a latency benchmark measures batch_latency_ms (and its"
            + " percentiles) or tokens_per_s_per_request (output tokens / batch latency), not " + k.key());
      }
      if (benchmark != Benchmark.LATENCY && k.key().startsWith("batch_latency")) {
        throw new IllegalArgumentException(where + ": " + k.key() + " belongs to latency benchmarks");
      }
    }
    Measured headline = defaultHeadline(measured.keySet(), benchmark, workload);
    if (p.has("headline")) {
      try {
        headline = Measured.parse(text(p, "headline", where));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(where + ": headline: " + e.getMessage(), e);
      }
      if (!measured.containsKey(headline)) {
        throw new IllegalArgumentException(where + ": headline " + headline.key() + " is not one of the measured statistics");
      }
    }
    List<String> assumptions = new ArrayList<>(sourceAssumptions);
    assumptions.addAll(strings(p, "assumptions", where));
    boolean chart = p.has("read_from_chart") && bool(p, "read_from_chart", where);
    return new CorpusPoint(source, text(p, "id", where), half, model, modelConfig, gpu, tp, pp, dp, ep, version, v1,
        benchmark, workload, server, measured, headline, chart, assumptions);
  }

  /** The per-token and first-token statistics, in the order a varying-length burst is judged by. */
  private static final List<Measured> PER_TOKEN_FIRST = List.of(Measured.MEAN_E2EL_MS, Measured.MEAN_TPOT_MS,
      Measured.MEAN_ITL_MS, Measured.MEDIAN_TPOT_MS, Measured.MEDIAN_ITL_MS, Measured.MEAN_TTFT_MS,
      Measured.MEDIAN_TTFT_MS);

  /**
   * The headline of a point that names none: the first statistic it measured in {@link
   * Measured}'s order, except for a burst (every request at once, no cap on those in flight) whose
   * lengths vary and are known only by their means: its duration and throughputs hang on its
   * longest request, whose length nobody published, so it is judged by its mean E2E, TPOT, ITL or
   * TTFT, the first of those it measured.
   */
  static Measured defaultHeadline(java.util.Set<Measured> measured, Benchmark b, CorpusPoint.Workload w) {
    boolean varying = w.inputTokens() == 0 || w.outputTokens() == 0;
    if (b.online() && w.allAtOnce() && w.maxConcurrency() == 0 && varying) {
      for (Measured m : PER_TOKEN_FIRST) {
        if (measured.contains(m)) {
          return m;
        }
      }
    }
    return measured.iterator().next();
  }

  private static CorpusPoint.Workload workload(JsonNode p, Benchmark b, LocalDate date, String where) {
    int batch = 0;
    int numPrompts = 0;
    double rate = Double.POSITIVE_INFINITY;
    int concurrency = 0;
    String dataset = p.has("dataset") ? text(p, "dataset", where) : b == Benchmark.LATENCY ? "" : "random";
    int in = intOr(p, "input_tokens", 0, 1, 10_000_000, where);
    int out = intOr(p, "output_tokens", 0, 1, 10_000_000, where);
    double meanIn = numberOr(p, "mean_input_tokens", Double.NaN, where);
    double meanOut = numberOr(p, "mean_output_tokens", Double.NaN, where);
    switch (b) {
      case LATENCY -> {
        batch = intOr(p, "batch", 0, 1, 1_000_000, where);
        if (batch == 0 || in == 0 || out == 0) {
          throw new IllegalArgumentException(where + ": a latency benchmark needs batch, input_tokens and output_tokens");
        }
      }
      case SERVING, CLIENT, THROUGHPUT -> {
        numPrompts = intOr(p, "num_prompts", 0, 1, 10_000_000, where);
        if (b != Benchmark.THROUGHPUT && p.has("request_rate")) {
          JsonNode r = p.get("request_rate");
          if (r.isTextual() && r.asText().equals("inf")) {
            rate = Double.POSITIVE_INFINITY;
          } else if (r.isNumber() && r.asDouble() > 0 && Double.isFinite(r.asDouble())) {
            rate = r.asDouble();
          } else {
            throw new IllegalArgumentException(where + ": request_rate must be a number > 0 or inf, got " + r);
          }
        }
        concurrency = intOr(p, "max_concurrency", 0, 1, 10_000_000, where);
        if (numPrompts == 0) {
          throw new IllegalArgumentException(where + ": a " + b.key() + " point needs num_prompts");
        }
        boolean fixed = in > 0 && out > 0;
        boolean means = Double.isFinite(meanIn) && Double.isFinite(meanOut);
        if (!fixed && !means) {
          throw new IllegalArgumentException(where + ": give input_tokens and output_tokens (fixed lengths) or"
              + " mean_input_tokens and mean_output_tokens (measured means of varying lengths)");
        }
        if (!p.has("request_rate") && concurrency == 0 && b == Benchmark.CLIENT) {
          throw new IllegalArgumentException(where + ": a client point needs request_rate or max_concurrency");
        }
      }
      default -> throw new IllegalStateException();
    }
    double burst = numberOr(p, "burstiness", 1.0, where);
    double ratio = numberOr(p, "range_ratio", Double.NaN, where);
    int prefix = intOr(p, "prefix_len", 0, 0, 10_000_000, where);
    return new CorpusPoint.Workload(batch, in, out, numPrompts, rate, burst, concurrency, dataset, ratio,
        !date.isBefore(RANGE_AROUND_MEAN), prefix, meanIn, meanOut);
  }

  private static CorpusPoint.Server server(JsonNode p, String where) {
    if (!p.has("server")) {
      return CorpusPoint.Server.NONE;
    }
    JsonNode s = object(p, "server", where);
    String w = where + ": server";
    keys(s, SERVER_KEYS, w);
    Function<String, Optional<Integer>> ints = k -> s.has(k) && !s.get(k).isNull()
        ? Optional.of(intOr(s, k, 0, 1, Integer.MAX_VALUE, w)) : Optional.empty();
    Function<String, Optional<Boolean>> bools = k -> s.has(k) && !s.get(k).isNull()
        ? Optional.of(bool(s, k, w)) : Optional.empty();
    Optional<Double> gmu = Optional.empty();
    if (s.has("gpu_memory_utilization")) {
      double v = numberOr(s, "gpu_memory_utilization", 0.9, w);
      if (!(v > 0 && v <= 1)) {
        throw new IllegalArgumentException(w + ".gpu_memory_utilization must be in (0, 1], got " + v);
      }
      gmu = Optional.of(v);
    }
    return new CorpusPoint.Server(ints.apply("max_num_seqs"), ints.apply("max_num_batched_tokens"),
        ints.apply("max_model_len"), gmu, bools.apply("enable_chunked_prefill"), bools.apply("enable_prefix_caching"),
        bools.apply("enforce_eager"), ints.apply("num_scheduler_steps"), bools.apply("async_scheduling"),
        s.has("quantization") ? Optional.of(s.get("quantization").asText()) : Optional.empty(),
        s.has("kv_cache_dtype") ? Optional.of(s.get("kv_cache_dtype").asText()) : Optional.empty());
  }

  // ---------------------------------------------------------------- field access

  private static void keys(JsonNode n, Set<String> allowed, String where) {
    for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!allowed.contains(k)) {
        throw new IllegalArgumentException(where + ": unknown key '" + InputTrees.quote(k) + "'; expected one of "
            + allowed.stream().sorted().toList());
      }
    }
  }

  private static String text(JsonNode n, String key, String where) {
    JsonNode v = n.get(key);
    if (v == null || v.isNull() || !(v.isTextual() || v.isNumber()) || v.asText().isBlank()) {
      throw new IllegalArgumentException(where + ": key '" + key + "' must be a non-empty string, got " + v);
    }
    return v.asText();
  }

  private static JsonNode object(JsonNode n, String key, String where) {
    JsonNode v = n.get(key);
    if (v == null || !v.isObject()) {
      throw new IllegalArgumentException(where + ": key '" + key + "' must be a mapping, got " + v);
    }
    return v;
  }

  private static boolean bool(JsonNode n, String key, String where) {
    JsonNode v = n.get(key);
    if (v == null || !v.isBoolean()) {
      throw new IllegalArgumentException(where + ": key '" + key + "' must be true or false, got " + v);
    }
    return v.asBoolean();
  }

  private static int intOr(JsonNode n, String key, int fallback, int min, int max, String where) {
    JsonNode v = n.get(key);
    if (v == null || v.isNull()) {
      return fallback;
    }
    if (!v.isIntegralNumber() || v.asLong() < min || v.asLong() > max) {
      throw new IllegalArgumentException(where + ": key '" + key + "' must be an integer in [" + min + ", " + max
          + "], got " + v);
    }
    return v.asInt();
  }

  private static double numberOr(JsonNode n, String key, double fallback, String where) {
    JsonNode v = n.get(key);
    if (v == null || v.isNull()) {
      return fallback;
    }
    if (!v.isNumber() || !Double.isFinite(v.asDouble()) || v.asDouble() < 0) {
      throw new IllegalArgumentException(where + ": key '" + key + "' must be a number >= 0, got " + v);
    }
    return v.asDouble();
  }

  private static LocalDate date(JsonNode n, String key, String where) {
    String s = text(n, key, where);
    try {
      // a month alone (YYYY-MM) stands for its first day
      return LocalDate.parse(s.matches("\\d{4}-\\d{2}") ? s + "-01" : s);
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException(where + ": key '" + key + "' must be a date YYYY-MM-DD (or a month YYYY-MM), got '"
          + InputTrees.quote(s) + "'", e);
    }
  }

  private static List<String> strings(JsonNode n, String key, String where) {
    JsonNode v = n.get(key);
    if (v == null || v.isNull()) {
      return List.of();
    }
    if (!v.isArray()) {
      throw new IllegalArgumentException(where + ": key '" + key + "' must be a list of strings");
    }
    List<String> out = new ArrayList<>();
    for (JsonNode x : v) {
      out.add(x.asText());
    }
    return out;
  }
}
