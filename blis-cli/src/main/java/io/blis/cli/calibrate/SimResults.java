package io.blis.cli.calibrate;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.OptionalDouble;

/**
 * The simulated side of {@code blis calibrate --sim-results}: the completed requests of a
 * simulation of a trace, read from either
 *
 * <ul>
 *   <li>this project's result JSON ({@code blis replay}/{@code run} with {@code --per-request},
 *       which {@code blis replay --trace-header/--trace-data --results-path} turns on): its {@code
 *       requests} array, records with outcome {@code completed} (ttft_ms and e2e_ms are converted
 *       to microseconds); or
 *   <li>Go BLIS's {@code replay --results-path} file: a JSON array of {@code {request_id, ttft_us,
 *       e2e_us, input_tokens, output_tokens, slo_class?, model?, itl_mean_us?}}.
 * </ul>
 *
 * As in Go BLIS only completed requests count: a request that timed out or was rejected in the
 * simulation has no simulated latencies to compare.
 */
public final class SimResults {

  private static final ObjectMapper JSON = new ObjectMapper();

  private SimResults() {}

  /**
   * One completed simulated request. Latencies are microseconds from its arrival at the server
   * (no network).
   *
   * @param requestId the trace's request_id
   * @param ttftUs time to first token
   * @param e2eUs time to last token
   * @param inputTokens prompt tokens simulated
   * @param outputTokens output tokens simulated
   */
  public record SimResult(long requestId, double ttftUs, double e2eUs, int inputTokens, int outputTokens) {}

  /**
   * Reads the completed requests of {@code file}; {@code flag} names it in errors (one line each,
   * saying how to produce a usable file).
   */
  public static List<SimResult> read(String flag, Path file) {
    JsonNode root = parse(flag, file);
    List<SimResult> out = new ArrayList<>();
    if (root.isArray()) {
      int i = 0;
      for (JsonNode r : root) {
        String where = flag + " " + file + ": element " + i++;
        if (!r.isObject()) {
          throw new IllegalArgumentException(where + " is not an object; expected Go BLIS's replay results"
              + " {request_id, ttft_us, e2e_us, input_tokens, output_tokens}");
        }
        out.add(new SimResult(integer(where, r, "request_id"), number(where, r, "ttft_us"),
            number(where, r, "e2e_us"), (int) integer(where, r, "input_tokens"),
            (int) integer(where, r, "output_tokens")));
      }
      if (out.isEmpty()) {
        throw new IllegalArgumentException(flag + " " + file + ": no sim results (an empty array): nothing to"
            + " calibrate against");
      }
      return out;
    }
    if (!root.isObject()) {
      throw new IllegalArgumentException(flag + " " + file + ": expected a result JSON object (blis replay"
          + " --results-path) or Go BLIS's array of replay results");
    }
    JsonNode requests = root.get("requests");
    if (requests == null || !requests.isArray()) {
      if (root.has("completed_requests")) {
        throw new IllegalArgumentException(flag + " " + file + ": this is an aggregate result (--output-format"
            + " go-blis) without per-request records; replay with the default --output-format blis and"
            + " --per-request (on by default for --trace-header/--trace-data with --results-path)");
      }
      throw new IllegalArgumentException(flag + " " + file + ": the result has no per-request records"
          + " (\"requests\"); replay the trace with --per-request (on by default for --trace-header/--trace-data"
          + " with --results-path)");
    }
    int i = 0;
    for (JsonNode r : requests) {
      String where = flag + " " + file + ": requests[" + i++ + "]";
      if (!r.isObject()) {
        throw new IllegalArgumentException(where + " is not an object");
      }
      if (!"completed".equals(r.path("outcome").asText()) || !r.path("ttft_ms").isNumber()
          || !r.path("e2e_ms").isNumber()) {
        continue;
      }
      out.add(new SimResult(integer(where, r, "id"), Math.round(number(where, r, "ttft_ms") * 1000),
          Math.round(number(where, r, "e2e_ms") * 1000), (int) integer(where, r, "input_tokens"),
          (int) integer(where, r, "output_tokens")));
    }
    if (out.isEmpty()) {
      throw new IllegalArgumentException(flag + " " + file + ": no completed request among its "
          + requests.size() + " per-request record(s): nothing to calibrate against");
    }
    return out;
  }

  /**
   * The simulation's aggregate KV cache hit rate in {@code file}: Go BLIS's MetricsOutput {@code
   * cache_hit_rate} ({@code --output-format go-blis}), or this project's result {@code
   * engine.kv_token_hit_rate}; empty when it has neither.
   */
  public static OptionalDouble hitRate(String flag, Path file) {
    JsonNode root = parse(flag, file);
    JsonNode v = root.path("cache_hit_rate");
    if (!v.isNumber()) {
      v = root.path("engine").path("kv_token_hit_rate");
    }
    if (!v.isNumber()) {
      return OptionalDouble.empty();
    }
    double rate = v.asDouble();
    if (!(rate >= 0) || rate > 1) {
      throw new IllegalArgumentException(flag + " " + file + ": the cache hit rate must be in [0, 1], got " + rate);
    }
    return OptionalDouble.of(rate);
  }

  private static JsonNode parse(String flag, Path file) {
    try {
      return JSON.readTree(Files.newBufferedReader(file));
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(flag + " " + file + ": not JSON: " + e.getOriginalMessage()
          + " (line " + (e.getLocation() == null ? "?" : e.getLocation().getLineNr()) + ")");
    } catch (IOException e) {
      throw new UncheckedIOException(flag + ": cannot read " + file + ": " + e.getMessage(), e);
    }
  }

  private static long integer(String where, JsonNode r, String key) {
    JsonNode v = r.get(key);
    if (v == null || !v.canConvertToLong() || !v.isIntegralNumber() || v.asLong() < 0) {
      throw new IllegalArgumentException(where + ": " + key + " must be a non-negative integer, got "
          + (v == null ? "none" : v.toString()));
    }
    return v.asLong();
  }

  private static double number(String where, JsonNode r, String key) {
    JsonNode v = r.get(key);
    if (v == null || !v.isNumber() || !Double.isFinite(v.asDouble())) {
      throw new IllegalArgumentException(where + ": " + key + " must be a number, got "
          + (v == null ? "none" : v.toString().toLowerCase(Locale.ROOT)));
    }
    return v.asDouble();
  }
}
