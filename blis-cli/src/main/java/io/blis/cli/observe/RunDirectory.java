package io.blis.cli.observe;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.engine.result.OutputFiles;
import io.blis.workload.RequestSpec;
import io.blis.workload.trace.TraceHeader;
import io.blis.workload.trace.TraceWriter;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The folder of one observed run. While the run goes, every request sent, every observation and
 * every metrics scrape is appended to its file and flushed at once, so that whatever ends the
 * client (the end of the workload, Ctrl-C, a crash) leaves every finished request on disk:
 *
 * <ul>
 *   <li>{@value #RUN}: the deployment, the server's answers to the probe and the settings, written
 *       first (the experiments entry without its measurements);
 *   <li>{@value #WORKLOAD}: the requests exactly as they were sent, a BLIS trace ({@code blis
 *       replay} reads it): ids in send order, arrival = send time, the client's timeout;
 *   <li>{@value #OBSERVATIONS}: one JSON object per request that ended ({@link Observation});
 *   <li>{@value #METRICS}: the server's Prometheus metrics, one row per scrape.
 * </ul>
 *
 * {@link #finish} then derives, from those files alone, {@value #REQUESTS} (the per-request trace
 * in the ground truth's CSV format) and {@value #EXPERIMENTS} (one entry of the ground truth's
 * {@code experiments.json} schema: the deployment, the workload as its trace, and the observed
 * summary per stage and overall), which {@code blis validate}, {@code calibrate} and {@code fit}
 * read.
 */
public final class RunDirectory implements ObservationListener, AutoCloseable {

  public static final String RUN = "run.json";
  public static final String WORKLOAD = "workload.csv";
  public static final String OBSERVATIONS = "observations.jsonl";
  public static final String METRICS = "metrics.csv";
  public static final String REQUESTS = "requests.csv";
  public static final String EXPERIMENTS = "experiments.json";

  static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private final Path dir;
  private final TraceWriter workload;
  private final Writer observations;
  private final JsonFactory jsonFactory = new JsonFactory();
  private final Writer metrics;

  private RunDirectory(Path dir, TraceWriter workload, Writer observations, Writer metrics) {
    this.dir = dir;
    this.workload = workload;
    this.observations = observations;
    this.metrics = metrics;
  }

  /**
   * Starts the folder of a run: refuses a folder that already holds one, copies the model's config
   * and the GPU file into it when they are files (so that the folder stands alone), writes {@value
   * #RUN} and opens the other files.
   *
   * @param id the run's id (the experiment id)
   * @param deployment the server's deployment
   * @param config how the server is driven
   * @param info what the server said before the run
   * @param workloadName short name of the workload (groups runs in reports)
   * @param workloadDescription the workload in words (kind, file, seed)
   * @param tokenSeed seed of the prompt contents, for the workload trace's header
   * @throws IllegalArgumentException if the folder holds a run or cannot be written
   */
  public static RunDirectory create(Path dir, String id, ServerDeployment deployment,
      ObserveConfig config, ServerInfo info, String workloadName, String workloadDescription,
      long tokenSeed) {
    requireFree(dir);
    try {
      Files.createDirectories(dir);
      ObjectNode run = entry(dir, id, deployment, config, info, workloadName, workloadDescription);
      Files.writeString(dir.resolve(RUN), JSON.writeValueAsString(run), StandardCharsets.UTF_8);
      TraceWriter trace = TraceWriter.create(dir.resolve(WORKLOAD), TraceHeader.of(tokenSeed, false,
          "requests sent by blis observe to " + config.endpoint() + ": " + workloadDescription));
      trace.flush();
      Writer obs = Files.newBufferedWriter(dir.resolve(OBSERVATIONS), StandardCharsets.UTF_8);
      Writer met = null;
      if (info.metrics()) {
        met = Files.newBufferedWriter(dir.resolve(METRICS), StandardCharsets.UTF_8);
        met.write(MetricsSample.CSV_HEADER);
        met.write('\n');
        met.flush();
      }
      return new RunDirectory(dir, trace, obs, met);
    } catch (IOException e) {
      throw new IllegalArgumentException("--out " + dir + ": cannot write: " + e.getMessage(), e);
    }
  }

  /**
   * Checks that {@code dir} can take a run: it holds none and, if it exists, is a folder.
   *
   * @throws IllegalArgumentException saying why not
   */
  public static void requireFree(Path dir) {
    if (Files.exists(dir) && !Files.isDirectory(dir)) {
      throw new IllegalArgumentException("--out " + dir + " is a file, not a folder");
    }
    if (Files.exists(dir.resolve(RUN)) || Files.exists(dir.resolve(OBSERVATIONS))) {
      throw new IllegalArgumentException("--out " + dir + " already holds an observed run (" + RUN
          + "); choose another folder");
    }
  }

  /** The entry of the experiments file without its measurements. */
  private static ObjectNode entry(Path dir, String id, ServerDeployment d, ObserveConfig config,
      ServerInfo info, String workloadName, String workloadDescription) throws IOException {
    ObjectNode e = JSON.createObjectNode();
    e.put("id", id);
    e.put("source", "blis observe against " + config.endpoint() + " (served model " + config.servedModel() + ")");
    e.put("started_at", Instant.now().toString());
    e.put("model", d.model());
    if (d.modelConfig() != null) {
      Path target = dir.resolve("model").resolve("config.json");
      Files.createDirectories(target.getParent());
      Files.copy(d.modelConfig(), target, StandardCopyOption.REPLACE_EXISTING);
      Path generation = d.modelConfig().toAbsolutePath().resolveSibling("generation_config.json");
      if (Files.isRegularFile(generation)) {
        Files.copy(generation, target.resolveSibling("generation_config.json"), StandardCopyOption.REPLACE_EXISTING);
      }
      e.put("model_config", "model/config.json");
    }
    ObjectNode hw = e.putObject("hardware");
    hw.put("gpu", d.gpu());
    hw.put("num_gpus", d.tp() * d.pp() * d.dp());
    if (d.gpuFile() != null) {
      int hash = d.gpuFile().lastIndexOf('#');
      Path source = Path.of(hash > 0 ? d.gpuFile().substring(0, hash) : d.gpuFile());
      Path target = dir.resolve("gpu").resolve(source.getFileName().toString());
      Files.createDirectories(target.getParent());
      Files.copy(source, target, StandardCopyOption.REPLACE_EXISTING);
      hw.put("spec", "gpu/" + target.getFileName() + (hash > 0 ? d.gpuFile().substring(hash) : ""));
    }
    e.put("tp", d.tp());
    e.put("dp", d.dp());
    if (d.pp() > 1) {
      e.put("pp", d.pp());
    }
    if (d.ep() > 1) {
      e.put("ep", d.ep());
    }
    ObjectNode v = e.putObject("vllm");
    if (d.vllmVersion() != null) {
      v.put("version", d.vllmVersion());
    }
    v.put("max_model_len", d.maxModelLen());
    v.put("max_num_batched_tokens", d.maxNumBatchedTokens());
    v.put("max_num_seqs", d.maxNumSeqs());
    v.put("gpu_memory_utilization", d.gpuMemoryUtilization());
    v.put("block_size", d.blockSize());
    if (d.kvBlocksGpu() > 0) {
      v.put("kv_blocks_gpu", d.kvBlocksGpu());
    }
    if (d.cpuOffloadBytes() > 0) {
      ObjectNode off = v.putObject("cpu_offload");
      off.put("enabled", true);
      off.put("cpu_bytes", d.cpuOffloadBytes());
    }
    ObjectNode sources = e.putObject("deployment_sources");
    d.sources().entrySet().stream().sorted(java.util.Map.Entry.comparingByKey())
        .forEach(s -> sources.put(s.getKey(), s.getValue()));
    ObjectNode server = e.putObject("server");
    server.put("endpoint", config.endpoint().toString());
    server.put("served_model", config.servedModel());
    ArrayNode models = server.putArray("models");
    info.models().forEach(models::add);
    if (info.maxModelLen() > 0) {
      server.put("max_model_len", info.maxModelLen());
    }
    if (info.version() != null) {
      server.put("version", info.version());
    }
    server.put("metrics", info.metrics() ? config.metricsUri().toString() : null);
    ObjectNode cache = server.putObject("cache_config");
    info.cacheConfig().entrySet().stream().sorted(java.util.Map.Entry.comparingByKey())
        .forEach(c -> cache.put(c.getKey(), c.getValue()));
    ArrayNode notes = server.putArray("notes");
    info.notes().forEach(notes::add);
    if (!info.warnings().isEmpty()) {
      ArrayNode warnings = server.putArray("warnings");
      info.warnings().forEach(warnings::add);
    }
    ObjectNode w = e.putObject("workload");
    w.put("name", workloadName);
    w.put("description", workloadDescription);
    w.put("trace", WORKLOAD);
    ObjectNode api = w.putObject("api");
    api.put("type", config.api().label());
    api.put("streaming", config.streaming());
    w.put("ignore_eos", config.ignoreEos());
    ObjectNode prompt = w.putObject("prompt");
    prompt.put("format", config.promptFormat().label());
    if (config.promptFormat() == ObserveConfig.PromptFormat.TEXT) {
      prompt.put("server_tokens_per_prompt", info.textOverheadTokens());
      prompt.put("tokens_per_word", info.tokensPerWord());
    }
    w.put("max_concurrency", config.maxConcurrency());
    w.put("client_timeout_s", config.timeoutUs() / 1e6);
    e.put("simulatable", d.simulatable());
    return e;
  }

  // ------------------------------------------------------------------ during the run

  @Override
  public void onSent(long seq, RequestSpec asSent, long scheduledUs) {
    // ids in send order, so that row i of the trace is row i of requests.csv
    // every request goes to the server as --model (observe sends no model of a workload's own)
    workload.write(new RequestSpec(seq, asSent.arrivalTimeUs(), asSent.promptTokens(),
        asSent.outputTokens(), asSent.sloClass(), asSent.tenant(), asSent.prefixGroup(),
        asSent.prefixLength(), asSent.sessionId(), asSent.round(), asSent.timeoutUs(), asSent.stage()));
    workload.flush();
  }

  @Override
  public void onObservation(Observation o) {
    try {
      JsonGenerator g = jsonFactory.createGenerator(observations);
      g.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
      o.write(g);
      g.flush();
      observations.write('\n');
      observations.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(dir.resolve(OBSERVATIONS) + ": cannot write: " + e.getMessage(), e);
    }
  }

  @Override
  public void onMetrics(MetricsSample sample) {
    if (metrics == null) {
      return;
    }
    try {
      metrics.write(sample.csvRow());
      metrics.write('\n');
      metrics.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(dir.resolve(METRICS) + ": cannot write: " + e.getMessage(), e);
    }
  }

  @Override
  public void close() {
    try {
      workload.close();
      observations.close();
      if (metrics != null) {
        metrics.close();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(dir + ": cannot close the run's files: " + e.getMessage(), e);
    }
  }

  // ------------------------------------------------------------------ after the run

  /**
   * Derives {@value #REQUESTS} and {@value #EXPERIMENTS} from the files of a run.
   *
   * @param dir the run's folder
   * @param run how the run ended, or null when it did not end normally (the client was killed):
   *     the entry then says the run is incomplete
   * @return the summary written to the experiments entry
   * @throws IllegalArgumentException if a file is missing or malformed (naming file and line)
   */
  public static RunReport finish(Path dir, ObservedRun run) {
    JsonNode entryNode = readJson(dir.resolve(RUN));
    if (!entryNode.isObject()) {
      throw new IllegalArgumentException(dir.resolve(RUN) + ": expected a JSON object");
    }
    ObjectNode entry = (ObjectNode) entryNode;
    RunReport report = RunReport.read(dir.resolve(OBSERVATIONS));
    List<MetricsSample> samples = Files.exists(dir.resolve(METRICS)) ? readMetrics(dir.resolve(METRICS)) : List.of();
    writeRequests(dir.resolve(REQUESTS), report.observations());
    ObjectNode status = entry.putObject("status");
    status.put("saturated", report.saturated());
    status.put("failure_rate", RunReport.round(report.failureRate(), 6));
    status.put("complete", run != null && !run.stopped());
    if (run == null) {
      status.put("note", "rebuilt from the run's files: the client did not end normally");
    } else if (run.stopped()) {
      status.put("note", "stopped before the workload ended: " + run.notSent() + " request(s) not sent");
    }
    entry.set("observed", report.observedJson());
    entry.set("client", report.clientJson(run));
    if (!samples.isEmpty()) {
      entry.set("server_metrics", RunReport.metricsJson(samples));
    }
    entry.put("per_request_trace", REQUESTS);
    entry.put("observations", OBSERVATIONS);
    ObjectNode root = JSON.createObjectNode();
    root.put("schema", "groundtruth/experiments v1");
    ObjectNode units = root.putObject("units");
    units.put("latency", "milliseconds");
    units.put("rates", "requests per second");
    units.put("durations", "seconds");
    units.put("throughput", "per second");
    units.put("token_counts", "tokens");
    root.putArray("experiments").add(entry);
    writeAtomically(dir.resolve(EXPERIMENTS), root);
    return report;
  }

  private static JsonNode readJson(Path file) {
    if (!Files.exists(file)) {
      throw new IllegalArgumentException(file + ": missing (not the folder of an observed run?)");
    }
    JsonNode root = io.blis.latency.coeff.InputTrees.json(
        io.blis.latency.coeff.InputTrees.readText(file, "run file"), file.toString());
    if (root == null) {
      throw new IllegalArgumentException(file + ": empty (the run was cut short while writing it?)");
    }
    return root;
  }

  private static List<MetricsSample> readMetrics(Path file) {
    List<MetricsSample> out = new ArrayList<>();
    try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      String line = r.readLine();
      int no = 1;
      while ((line = r.readLine()) != null) {
        no++;
        if (!line.isBlank()) {
          out.add(MetricsSample.parse(line, file + ":" + no));
        }
      }
    } catch (IOException e) {
      throw new IllegalArgumentException(file + ": cannot read: " + e.getMessage(), e);
    }
    return out;
  }

  /**
   * {@value #REQUESTS}: one row per request sent, in send order, in the ground truth's columns
   * ({@code req,stage,arrival_ms,ok,input_tokens,output_tokens_client,e2e_ms,ttft_ms}).
   */
  private static void writeRequests(Path file, List<Observation> observations) {
    StringBuilder b = new StringBuilder(64 * (observations.size() + 1));
    b.append("req,stage,arrival_ms,ok,input_tokens,output_tokens_client,e2e_ms,ttft_ms\n");
    for (Observation o : observations) {
      b.append(o.seq()).append(',').append(o.stage()).append(',').append(ms(o.sendUs())).append(',')
          .append(o.ok() ? 1 : 0).append(',').append(o.inputTokens()).append(',')
          .append(o.outputTokens()).append(',').append(ms(Math.max(0, o.e2eUs()))).append(',')
          .append(o.ttftUs() >= 0 ? ms(o.ttftUs()) : "").append('\n');
    }
    try {
      OutputFiles.write(file, b);
    } catch (IOException e) {
      throw new UncheckedIOException(file + ": cannot write: " + e.getMessage(), e);
    }
  }

  private static String ms(long us) {
    return String.format(java.util.Locale.ROOT, "%.3f", us / 1000.0);
  }

  private static void writeAtomically(Path file, JsonNode json) {
    try {
      OutputFiles.write(file, JSON.writeValueAsString(json) + "\n");
    } catch (IOException e) {
      throw new UncheckedIOException(file + ": cannot write: " + e.getMessage(), e);
    }
  }
}
