package io.blis.workload.inferenceperf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.blis.workload.StrictYaml;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * Reads inference-perf profiles: an inference-perf config file ({@code data: {type: shared_prefix,
 * shared_prefix: {...}}, load: {type, stages: [{rate, duration}], interval}, api: {...}}) or the
 * {@code workload} object of a ground-truth {@code experiments.json} entry. Defaults are
 * inference-perf's: 10 groups x 10 prompts, system prompt 100, question 50, output 50 tokens,
 * interval 1 s, client timeout 300 s, load type constant.
 */
public final class InferencePerfProfiles {

  private InferencePerfProfiles() {}

  /** Parses a profile file (YAML or JSON). */
  public static InferencePerfProfile load(Path file) {
    return StrictYaml.load(file, ProfileFile.class).toProfile();
  }

  /** Parses profile text; {@code sourceName} names it in error messages. */
  public static InferencePerfProfile parse(String text, String sourceName) {
    try {
      return StrictYaml.parse(text, sourceName, ProfileFile.class).toProfile();
    } catch (IllegalArgumentException e) {
      if (e.getMessage() != null && e.getMessage().startsWith(sourceName)) {
        throw e;
      }
      throw new IllegalArgumentException(sourceName + ": " + e.getMessage(), e);
    }
  }

  /** The workload of experiment {@code id} in a ground-truth {@code experiments.json}. */
  public static InferencePerfProfile fromExperiments(Path experimentsJson, String id) {
    JsonNode root;
    try {
      root = new ObjectMapper().readTree(experimentsJson.toFile());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + experimentsJson + ": " + e.getMessage(), e);
    }
    StringBuilder known = new StringBuilder();
    for (JsonNode e : root.path("experiments")) {
      String eid = e.path("id").asText();
      if (eid.equals(id)) {
        return parse(e.path("workload").toString(), experimentsJson + " (experiment " + id + ")");
      }
      known.append(known.length() == 0 ? "" : ", ").append(eid);
    }
    throw new IllegalArgumentException(
        experimentsJson + ": no experiment '" + id + "'; known ids: " + known);
  }
}
