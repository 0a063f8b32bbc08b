package io.blis.workload.spec;

import com.fasterxml.jackson.databind.JsonNode;
import io.blis.workload.RequestSource;
import io.blis.workload.StrictYaml;
import io.blis.workload.TextFiles;
import io.blis.workload.inferenceperf.InferencePerfProfile;
import io.blis.workload.inferenceperf.InferencePerfWorkload;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A workload spec file in either format this project reads: its own ({@link WorkloadSpec}) or Go
 * BLIS's (versions 1 and 2: clients and cohorts become {@link WorkloadSpec} clients, an {@code
 * inference_perf} block an {@link InferencePerfProfile}). The format is told by the content: Go
 * BLIS's keys ({@code input_distribution}, {@code tenant_id}, {@code horizon}, a quoted {@code
 * version: "2"}, ...) against this project's ({@code input}, {@code tenant}, {@code horizon_s},
 * ...); a file with keys of both is refused in one line naming the first of each.
 *
 * @param format which format the file is in
 * @param goVersion Go BLIS spec version ("1" or "2"), null for this project's format
 * @param spec the clients, or null when the file is an inference-perf block
 * @param inferencePerf the inference-perf profile of a Go BLIS {@code inference_perf} block, else
 *     null
 * @param seed the file's seed
 * @param notes one line per field that has no meaning here (file:line:column: why), in file order
 */
public record WorkloadFile(Format format, String goVersion, WorkloadSpec spec,
    InferencePerfProfile inferencePerf, long seed, List<String> notes) {

  /** The formats of workload spec files. */
  public enum Format {
    /** This project's workload spec (docs/workloads.md). */
    BLIS,
    /** Go BLIS's WorkloadSpec, versions 1 and 2 (docs/go-blis.md). */
    GO_BLIS
  }

  public WorkloadFile {
    Objects.requireNonNull(format, "format");
    if ((spec == null) == (inferencePerf == null)) {
      throw new IllegalArgumentException("a workload file is clients or an inference-perf profile");
    }
    notes = List.copyOf(notes);
  }

  /** A top-level {@code version:} with a quoted value, as Go BLIS specs write it. */
  private static final java.util.regex.Pattern GO_VERSION_LINE =
      java.util.regex.Pattern.compile("(?m)^version:\\s*[\"']");

  /** Top-level keys only Go BLIS's spec has. */
  private static final List<String> GO_TOP = List.of("category", "horizon", "cohorts",
      "servegen_data", "inference_perf", "goodput_slo_targets");
  /** Client keys only Go BLIS's spec has. */
  private static final Set<String> GO_CLIENT = Set.of("tenant_id", "concurrency",
      "think_time_us", "input_distribution", "output_distribution", "streaming", "network",
      "multimodal", "reasoning", "timeout", "slo_target_us", "closed_loop");
  /** Top-level keys only this project's spec has. */
  private static final List<String> BLIS_TOP = List.of("horizon_s");
  /** Client keys only this project's spec has. */
  private static final Set<String> BLIS_CLIENT = Set.of("preset", "tenant", "input", "output",
      "timeout_s", "session", "rate", "adapters");

  /** Reads {@code file} in whichever format it is in. */
  public static WorkloadFile load(Path file) {
    return parse(TextFiles.readConfig(file), file.toString());
  }

  /**
   * Reads {@code file}; a Go BLIS spec's {@code num_requests} is {@code numRequests} when that is
   * above 0 (Go BLIS's {@code --num-requests} with {@code --workload-spec}).
   */
  public static WorkloadFile load(Path file, long numRequests) {
    return parse(TextFiles.readConfig(file), file.toString(), numRequests);
  }

  /** Parses spec text in whichever format it is in; {@code source} names it in messages. */
  public static WorkloadFile parse(String text, String source) {
    return parse(text, source, 0);
  }

  private static WorkloadFile parse(String text, String source, long goNumRequests) {
    if (detect(text, source) == Format.BLIS) {
      WorkloadSpec spec = WorkloadSpec.parse(text, source);
      return new WorkloadFile(Format.BLIS, null, spec, null, spec.seed(), List.of());
    }
    GoSpecFile f = StrictYaml.parse(text, source, GoSpecFile.class);
    return new GoSpecs(text, source, goNumRequests).translate(f);
  }

  /**
   * The format of spec text (a Go BLIS spec when it has any key only Go BLIS's format has).
   *
   * @throws IllegalArgumentException when the text has keys of both formats
   */
  public static Format detect(String text, String source) {
    JsonNode root;
    try {
      root = StrictYaml.parse(text, source, JsonNode.class);
    } catch (IllegalArgumentException notYaml) {
      if (GO_VERSION_LINE.matcher(text).find()) {
        // a Go BLIS spec (a quoted version) that is not YAML, cut short say: the YAML error, rather
        // than this project's reader failing at the Go version it reads first
        throw notYaml;
      }
      return Format.BLIS; // the spec reader says what is wrong, with the key it was reading
    }
    if (!root.isObject()) {
      return Format.BLIS; // the spec reader says what is wrong
    }
    List<String> go = new ArrayList<>();
    List<String> blis = new ArrayList<>();
    JsonNode version = root.get("version");
    if (version != null && (version.isTextual() || (version.isNumber() && version.asDouble() != 1))) {
      go.add("version");
    }
    for (String k : GO_TOP) {
      if (root.has(k)) {
        go.add(k);
      }
    }
    for (String k : BLIS_TOP) {
      if (root.has(k)) {
        blis.add(k);
      }
    }
    JsonNode clients = root.get("clients");
    if (clients != null && clients.isArray()) {
      for (int i = 0; i < clients.size(); i++) {
        JsonNode c = clients.get(i);
        if (!c.isObject()) {
          continue;
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = c.fields(); it.hasNext(); ) {
          Map.Entry<String, JsonNode> e = it.next();
          String path = "clients[" + i + "]." + e.getKey();
          if (GO_CLIENT.contains(e.getKey())) {
            go.add(path);
          } else if (BLIS_CLIENT.contains(e.getKey())) {
            blis.add(path);
          } else if (e.getKey().equals("lifecycle")) {
            (e.getValue().isObject() ? go : blis).add(path);
          }
        }
      }
    }
    if (!go.isEmpty() && !blis.isEmpty()) {
      throw new IllegalArgumentException(StrictYaml.location(source, text, blis.get(0)) + ": '"
          + GoSpecs.key(blis.get(0)) + "' is a key of this project's workload spec, but '"
          + GoSpecs.key(go.get(0)) + "' (at "
          + position(text, go.get(0)) + ") is Go BLIS's: write the file in one format"
          + " (blis convert turns a Go BLIS spec into this project's; see docs/go-blis.md)");
    }
    return go.isEmpty() ? Format.BLIS : Format.GO_BLIS;
  }

  private static String position(String text, String path) {
    String pos = StrictYaml.position(text, path);
    return pos == null ? "?" : "line " + pos.replace(":", ", column ");
  }

  /** A fresh request stream of the workload with {@code seed}. */
  public RequestSource source(long seed) {
    if (spec != null && format == Format.GO_BLIS) {
      // Go BLIS's num_requests counts the rounds of multi-turn sessions
      return io.blis.workload.synthetic.SyntheticWorkload.ofGoBlis(spec.clients(), seed, spec.maxRequests(),
          spec.horizonUs());
    }
    return spec != null ? spec.source(seed) : InferencePerfWorkload.synthetic(inferencePerf, seed);
  }
}
