package io.blis.workload.inferenceperf;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.blis.workload.StrictYaml;
import io.blis.workload.TextFiles;
import java.nio.file.Path;

/**
 * Reads inference-perf profiles: an inference-perf config file ({@code data: {type: shared_prefix,
 * shared_prefix: {...}}, load: {type, stages: [{rate, duration}], interval}, api: {...}}) or the
 * {@code workload} object of a ground-truth {@code experiments.json} entry. Defaults are
 * inference-perf's: 10 groups x 10 prompts, system prompt 100, question 50, output 50 tokens,
 * interval 1 s, client timeout 300 s, load type constant.
 */
public final class InferencePerfProfiles {

  private static final ObjectMapper EXPERIMENTS_JSON = JsonMapper.builder()
      .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
      .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
      .build();

  private InferencePerfProfiles() {}

  /** Parses a profile file (YAML or JSON). */
  public static InferencePerfProfile load(Path file) {
    ProfileFile f = StrictYaml.load(file, ProfileFile.class);
    try {
      return f.toProfile();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(file + ": " + TextFiles.oneLine(e.getMessage()), e);
    }
  }

  /** Parses profile text; {@code sourceName} names it in error messages. */
  public static InferencePerfProfile parse(String text, String sourceName) {
    try {
      return StrictYaml.parse(text, sourceName, ProfileFile.class).toProfile();
    } catch (IllegalArgumentException e) {
      if (e.getMessage() != null && e.getMessage().startsWith(sourceName)) {
        throw e;
      }
      throw new IllegalArgumentException(sourceName + ": " + TextFiles.oneLine(e.getMessage()), e);
    }
  }

  /** The workload of experiment {@code id} in a ground-truth {@code experiments.json}. */
  public static InferencePerfProfile fromExperiments(Path experimentsJson, String id) {
    JsonNode root;
    String text = TextFiles.readText(experimentsJson, 256 << 20);
    try {
      root = EXPERIMENTS_JSON.readTree(text);
    } catch (JsonProcessingException e) {
      JsonLocation loc = e.getLocation();
      throw new IllegalArgumentException(experimentsJson
          + (loc != null && loc.getLineNr() > 0 ? ":" + loc.getLineNr() + ":" + loc.getColumnNr() : "")
          + ": " + StrictYaml.problem(e), e);
    }
    if (root == null || !root.isObject() || !root.path("experiments").isArray()) {
      throw new IllegalArgumentException(
          experimentsJson + ": expected a JSON object with a list \"experiments\"");
    }
    StringBuilder known = new StringBuilder();
    for (JsonNode e : root.path("experiments")) {
      String eid = e.path("id").asText();
      if (eid.equals(id)) {
        return parse(e.path("workload").toString(),
            experimentsJson + " (experiment " + TextFiles.quote(id) + ")");
      }
      known.append(known.length() == 0 ? "" : ", ").append(eid);
    }
    throw new IllegalArgumentException(TextFiles.oneLine(
        experimentsJson + ": no experiment '" + id + "'; known ids: " + known));
  }
}
