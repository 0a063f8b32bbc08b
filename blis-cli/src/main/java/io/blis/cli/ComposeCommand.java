package io.blis.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.blis.workload.StrictYaml;
import io.blis.workload.TextFiles;
import io.blis.workload.spec.WorkloadFile;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code blis compose}: Go BLIS's merge of workload specs into one, printed. Every spec keeps its
 * clients' absolute rates: the aggregate rates add up and each rate-sharing client's {@code
 * rate_fraction} becomes its share of the sum (its spec's share times its own share there).
 */
@Command(
    name = "compose",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = "Merge workload specs into one (Go BLIS's compose): clients concatenated, aggregate rates summed,"
        + " rate fractions rescaled so every client keeps its rate. Printed, or written to --out.")
final class ComposeCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(names = "--from", required = true, paramLabel = "FILE",
      description = "A workload spec (repeat for each); all in Go BLIS's format or all in this project's.")
  List<Path> from;

  @Option(names = {"-o", "--out"}, paramLabel = "FILE", description = "Write the merged spec here instead of printing it.")
  Path out;

  private static final YAMLMapper YAML = new YAMLMapper(new YAMLFactory()
      .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
      .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
      .enable(YAMLGenerator.Feature.ALWAYS_QUOTE_NUMBERS_AS_STRINGS)
      .disable(YAMLGenerator.Feature.SPLIT_LINES));

  @Override
  public Integer call() throws Exception {
    CommandLine cl = spec.commandLine();
    List<JsonNode> roots = new ArrayList<>();
    WorkloadFile.Format format = null;
    for (Path f : from) {
      Cli.requireFile("--from", f);
      WorkloadFile w = WorkloadFile.load(f); // checks the spec as a run would
      DeploymentOptions.require(cl, format == null || w.format() == format, "--from: " + f + " is in "
          + name(w.format()) + " format and " + from.get(0) + " in " + name(format) + "; compose specs of one format");
      format = w.format();
      roots.add(StrictYaml.parse(TextFiles.readConfig(f), f.toString(), JsonNode.class));
    }
    ObjectNode merged = format == WorkloadFile.Format.BLIS ? mergeOwn(cl, roots) : mergeGo(cl, roots);
    String yaml = StrictYaml.comments(List.of("Composed by blis compose from " + String.join(", ",
        from.stream().map(Path::toString).toList()) + ".")) + YAML.writeValueAsString(merged);
    ConvertCommand.emit(cl, out, yaml, "a workload spec of " + from.size() + " composed");
    return 0;
  }

  private static String name(WorkloadFile.Format f) {
    return f == WorkloadFile.Format.BLIS ? "this project's" : "Go BLIS's";
  }

  /**
   * Go BLIS's merge, as its compose does: version 2, the first spec's category, the summed aggregate
   * rate and every client (and cohort) with its {@code rate_fraction} times its spec's share of
   * that sum. Unlike Go BLIS's, which drops them, the first spec's seed, the summed num_requests and
   * the longest horizon are kept, so that the merged spec bounds itself as its parts did.
   */
  private ObjectNode mergeGo(CommandLine cl, List<JsonNode> roots) {
    ObjectNode m = JsonNodeFactory.instance.objectNode();
    m.put("version", "2");
    if (roots.get(0).has("category")) {
      m.set("category", roots.get(0).get("category"));
    }
    bounds(m, roots, "horizon");
    double total = 0;
    for (JsonNode r : roots) {
      total += r.path("aggregate_rate").asDouble(0);
    }
    m.put("aggregate_rate", total);
    ArrayNode clients = m.putArray("clients");
    ArrayNode cohorts = JsonNodeFactory.instance.arrayNode();
    Map<String, Path> ids = new HashMap<>();
    for (int i = 0; i < roots.size(); i++) {
      JsonNode r = roots.get(i);
      double weight = total > 0 ? r.path("aggregate_rate").asDouble(0) / total : 1;
      for (String list : new String[] {"clients", "cohorts"}) {
        for (JsonNode c : r.path(list)) {
          ObjectNode copy = ((ObjectNode) c).deepCopy();
          unique(cl, ids, copy.path("id").asText(), from.get(i));
          if (total > 0 && copy.has("rate_fraction")) {
            copy.put("rate_fraction", copy.get("rate_fraction").asDouble() * weight);
          }
          (list.equals("clients") ? clients : cohorts).add(copy);
        }
      }
    }
    if (!cohorts.isEmpty()) {
      m.set("cohorts", cohorts);
    }
    return m;
  }

  /**
   * This project's format: the first spec's seed; num_requests summed and horizon_s the longest of
   * those given; clients with their own {@code rate} as they are, and each rate-sharing client's
   * {@code rate_fraction} made its share of the summed {@code aggregate_rate}.
   */
  private ObjectNode mergeOwn(CommandLine cl, List<JsonNode> roots) {
    ObjectNode m = JsonNodeFactory.instance.objectNode();
    bounds(m, roots, "horizon_s");
    double total = 0;
    for (JsonNode r : roots) {
      total += r.path("aggregate_rate").asDouble(0);
    }
    if (total > 0) {
      m.put("aggregate_rate", total);
    }
    ArrayNode clients = m.putArray("clients");
    Map<String, Path> ids = new HashMap<>();
    for (int i = 0; i < roots.size(); i++) {
      JsonNode r = roots.get(i);
      double fractions = 0;
      for (JsonNode c : r.path("clients")) {
        if (!c.has("rate")) {
          fractions += c.path("rate_fraction").asDouble(1.0);
        }
      }
      double share = total > 0 ? r.path("aggregate_rate").asDouble(0) / total : 0;
      for (JsonNode c : r.path("clients")) {
        ObjectNode copy = ((ObjectNode) c).deepCopy();
        unique(cl, ids, copy.path("id").asText(), from.get(i));
        if (!copy.has("rate")) {
          copy.put("rate_fraction", copy.path("rate_fraction").asDouble(1.0) / fractions * share);
        }
        clients.add(copy);
      }
      DeploymentOptions.require(cl, !r.has("rate_by_hour"), "--from: " + from.get(i) + " has rate_by_hour, which"
          + " belongs to one spec's clients; compose specs without it");
    }
    return m;
  }

  /** The first spec's seed, the summed num_requests and the longest {@code horizonKey}, of those given. */
  private static void bounds(ObjectNode m, List<JsonNode> roots, String horizonKey) {
    if (roots.get(0).has("seed")) {
      m.set("seed", roots.get(0).get("seed"));
    }
    long requests = 0;
    boolean anyRequests = false;
    double horizon = 0;
    for (JsonNode r : roots) {
      if (r.has("num_requests")) {
        anyRequests = true;
        requests += r.get("num_requests").asLong();
      }
      horizon = Math.max(horizon, r.path(horizonKey).asDouble(0));
    }
    if (anyRequests) {
      m.put("num_requests", requests);
    }
    if (horizon > 0) {
      if (horizon == Math.rint(horizon)) {
        m.put(horizonKey, (long) horizon);
      } else {
        m.put(horizonKey, horizon);
      }
    }
  }

  private static void unique(CommandLine cl, Map<String, Path> ids, String id, Path file) {
    Path before = ids.putIfAbsent(id, file);
    DeploymentOptions.require(cl, before == null, "--from: client id '" + id + "' is in both " + before + " and "
        + file + "; give the clients distinct ids");
  }
}
