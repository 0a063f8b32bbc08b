package io.blis.cli;

import static io.blis.cli.BlisCliTest.assertUsageError;
import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import io.blis.cli.BlisCliTest.Outcome;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Malformed workload inputs through {@link BlisCli#execute}: traces, ground-truth CSVs, workload
 * specs and inference-perf profiles. Each prints one line naming the file (and line, column, field
 * or key) and exits with 2; none reaches the simulation, runs out of memory or ends as an empty
 * run. A byte-order mark changes nothing.
 */
class WorkloadInputsCliTest {

  static final String TRACE_HEADER =
      "# blis-trace {\"version\":1,\"time_unit\":\"us\",\"token_seed\":1,\"token_ids\":false}\n"
          + "id,arrival_us,input_tokens,output_tokens,prefix_group,prefix_length,content_id,"
          + "session_id,round,slo_class,tenant,stage,timeout_us\n";

  static final String ROW0 = "0,100,20,5,,0,123,-1,0,standard,,0,0\n";
  static final String ROW1 = "1,200,30,6,,0,124,-1,0,standard,,0,0\n";

  static final String GT_HEADER =
      "req,stage,arrival_ms,ok,input_tokens,output_tokens_client,e2e_ms,ttft_ms\n";

  static final String SPEC = """
      aggregate_rate: 5
      num_requests: 10
      clients:
        - id: chat
          input: {type: gaussian, mean: 100, std: 10, min: 1, max: 200}
          output: {type: constant, value: 5}
      """;

  static final String PROFILE = WorkloadCliTest.PROFILE;

  /** Writes the file named by a placeholder of the table below and returns its path. */
  static Path file(Path dir, String name) throws IOException {
    return switch (name) {
      case "HUGE_TRACE" -> write(dir, "huge.csv", TRACE_HEADER + ROW0
          + "1,200,2000000000,6,,0,124,-1,0,standard,,0,0\n");
      case "HUGE_OUTPUT_TRACE" -> write(dir, "huge-out.csv", TRACE_HEADER
          + "0,100,20,2000000000,,0,123,-1,0,standard,,0,0\n");
      case "HUGE_SPEC" -> write(dir, "huge.yaml", SPEC.replace("max: 200", "max: 2000000000"));
      case "HUGE_PROFILE" -> write(dir, "huge-profile.yaml",
          PROFILE.replace("output_len: 40", "output_len: 2000000000"));
      case "HUGE_GT" -> write(dir, "huge-gt.csv", GT_HEADER
          + "0,0,0.000,1,2000000000,140,1943.702,130.224\n");
      case "ORPHAN" -> write(dir, "orphan.csv", TRACE_HEADER + ROW0
          + "2,300,20,5,,0,125,5,1,standard,,0,0\n");
      case "DUPLICATE" -> write(dir, "dup.csv", TRACE_HEADER + ROW0 + ROW1 + ROW0.replace(",100,", ",300,"));
      case "HEADER_ONLY" -> write(dir, "header-only.csv", TRACE_HEADER);
      case "GT_HEADER_ONLY" -> write(dir, "gt-header-only.csv", GT_HEADER);
      case "EMPTY" -> write(dir, "empty.yaml", "");
      case "EMPTY_TRACE" -> write(dir, "empty.csv", "");
      case "COMMENTS" -> write(dir, "comments.yaml", "# nothing yet\n");
      case "DIR" -> Files.createDirectories(dir.resolve("folder"));
      case "BINARY" -> Files.write(dir.resolve("binary.csv"), garbage());
      case "BINARY_GZ" -> Files.write(dir.resolve("binary.csv.gz"), garbage());
      case "BINARY_YAML" -> Files.write(dir.resolve("binary.yaml"), garbage());
      case "TRUNCATED_GZ" -> {
        byte[] gz = gzip(TRACE_HEADER + ROW0 + ROW1);
        yield Files.write(dir.resolve("cut.csv.gz"), Arrays.copyOf(gz, gz.length - 12));
      }
      case "QUOTED" -> write(dir, "quoted.yaml", SPEC.replace("aggregate_rate: 5", "aggregate_rate: \"5\""));
      case "FRACTION" -> write(dir, "fraction.yaml", SPEC.replace("num_requests: 10", "num_requests: 1.5"));
      case "DUP_KEY" -> write(dir, "dup-key.yaml", SPEC + "num_requests: 11\n");
      case "YAML_SYNTAX" -> write(dir, "syntax.yaml", SPEC.replace("value: 5}", "value: 5"));
      case "ALIAS_SPEC" -> write(dir, "alias.yaml", SPEC.replace("aggregate_rate: 5", "seed: &n 5\naggregate_rate: 5")
          .replace("num_requests: 10", "num_requests: *n"));
      case "ALIAS_PROFILE" -> write(dir, "alias-profile.yaml", PROFILE
          .replace("system_prompt_len: 100", "system_prompt_len: &len 100")
          .replace("question_len: 200", "question_len: *len"));
      case "SLOW" -> write(dir, "slow.yaml", SPEC.replace("aggregate_rate: 5", "aggregate_rate: 1e-300"));
      case "NOTHING_IN_HORIZON" -> write(dir, "horizon.yaml", SPEC.replace("num_requests: 10", "horizon_s: 0.000001"));
      case "NO_REQUEST_PROFILE" -> write(dir, "zero.yaml", PROFILE.replace("rate: 4", "rate: 0.1")
          .replace("rate: 6", "rate: 0.1"));
      case "PROFILE" -> write(dir, "profile.yaml", PROFILE);
      case "TRACE_HEADER_JSON" -> write(dir, "bad-header.csv", TRACE_HEADER.replace("\"token_ids\":false}",
          "\"token_ids\":false") + ROW0);
      default -> throw new IllegalArgumentException(name);
    };
  }

  static Path write(Path dir, String name, String text) throws IOException {
    return Files.writeString(dir.resolve(name), text, StandardCharsets.UTF_8);
  }

  static byte[] garbage() {
    byte[] bytes = new byte[600];
    new SplittableRandom(11).nextBytes(bytes);
    bytes[0] = (byte) 0xFF; // never in UTF-8, and not the gzip signature
    bytes[1] = (byte) 0x00;
    return bytes;
  }

  static byte[] gzip(String text) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (OutputStream out = new GZIPOutputStream(bytes)) {
      out.write(text.getBytes(StandardCharsets.UTF_8));
    }
    return bytes.toByteArray();
  }

  /** Replaces placeholders (upper case) by the files they name; FILE in the expectation too. */
  static String[] argv(Path dir, String args) throws IOException {
    List<String> out = new java.util.ArrayList<>();
    for (String a : args.split(" ")) {
      out.add(a.matches("[A-Z_]+") ? file(dir, a).toString() : a);
    }
    return out.toArray(String[]::new);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', quoteCharacter = '~', value = {
      // 1. token counts beyond RequestSpec.MAX_TOKENS, found when the file is read
      "trace prompt of 2e9 tokens|replay --trace HUGE_TRACE|huge.csv:4: field 'input_tokens' = '2000000000': expected an integer in [1, 10000000] (the most tokens a request may have)",
      "trace output of 2e9 tokens|replay --trace HUGE_OUTPUT_TRACE|huge-out.csv:3: field 'output_tokens' = '2000000000': expected an integer in [1, 10000000]",
      "spec length max of 2e9|run --workload-spec HUGE_SPEC|huge.yaml:5:57: at 'clients[0].input': gaussian max must be at most 10000000 tokens (the most tokens a request may have), got 2000000000",
      "profile output_len of 2e9|run --inference-perf HUGE_PROFILE|huge-profile.yaml:22:5: at 'data.shared_prefix': shared_prefix: output_len must be in [1, 10000000]",
      "ground truth prompt of 2e9|replay --trace HUGE_GT --inference-perf PROFILE|huge-gt.csv:2: field 'input_tokens' = '2000000000': expected an integer in [1, 10000000]",
      // 2. a follow-up round without its previous round
      "orphan session round|replay --trace ORPHAN|orphan.csv:4: session 5 round 1 has no round 0 in the trace",
      // 3. duplicate request ids
      "duplicate request id|replay --trace DUPLICATE|dup.csv:5: request id 0 appears twice, on lines 3 and 5",
      // 4. no rows
      "trace with only its header|replay --trace HEADER_ONLY|header-only.csv: no requests: the trace has its two header lines and no rows",
      "ground truth with only its header|replay --trace GT_HEADER_ONLY --inference-perf PROFILE|gt-header-only.csv: no requests: the ground-truth trace has its header line and no rows",
      "empty trace|replay --trace EMPTY_TRACE|empty.csv: the file is empty, expected a trace",
      // 6. files that are not what they should be
      "directory as trace|replay --trace DIR|is a directory, expected a file",
      "directory as spec|run --workload-spec DIR|is a directory, expected a file",
      "binary trace|replay --trace BINARY|binary.csv:1: not UTF-8 text (a binary file, or text in another encoding?)",
      "binary named .gz|replay --trace BINARY_GZ|binary.csv.gz:1: neither gzip data (its name ends in .gz but it lacks the gzip signature) nor UTF-8 text",
      "binary spec|run --workload-spec BINARY_YAML|binary.yaml:1: not UTF-8 text",
      "truncated gzip|replay --trace TRUNCATED_GZ|the gzip data is truncated",
      // 7. the binding library's words never reach the user
      "empty spec|run --workload-spec EMPTY|empty.yaml: the file is empty",
      "empty profile|run --inference-perf EMPTY|empty.yaml: the file is empty",
      "comments only|run --workload-spec COMMENTS|comments.yaml:2:1: the document is empty (nothing but comments)",
      "quoted number|run --workload-spec QUOTED|quoted.yaml:1:1: at 'aggregate_rate': expected a number, got the text '5'",
      "fraction for an integer|run --workload-spec FRACTION|fraction.yaml:2:1: at 'num_requests': expected an integer, got 1.5",
      "duplicate key|run --workload-spec DUP_KEY|dup-key.yaml:7:1: key 'num_requests' appears twice",
      "YAML syntax|run --workload-spec YAML_SYNTAX|syntax.yaml:7:1: at 'clients[0].output': invalid YAML: expected ',' or '}', but got <stream end> (while parsing a flow mapping started at line 6, column 13)",
      "trace header JSON|replay --trace TRACE_HEADER_JSON|bad-header.csv:1:",
      // 8. YAML aliases are refused where they are written
      "alias in a spec|run --workload-spec ALIAS_SPEC|alias.yaml:3:15: at 'num_requests': YAML aliases are not supported (*n): write the value out in full",
      "alias in a profile|run --inference-perf ALIAS_PROFILE|alias-profile.yaml:21:19: at 'data.shared_prefix.question_len': YAML aliases are not supported (*len)",
      // 9. workloads that would send nothing, or not within simulated time
      "rate of 1e-300|run --workload-spec SLOW|slow.yaml:1:1: aggregate_rate must be at least 3.17e-08 requests per second (one per 365 days, the latest simulated time), got 1.0E-300",
      "nothing within the horizon|run --workload-spec NOTHING_IN_HORIZON|the workload sends no request: every client's first arrival falls after the horizon (1.0E-6 s)",
      "profile without requests|run --inference-perf NO_REQUEST_PROFILE|zero.yaml: the profile sends no request: rate x duration is below 1 in every load stage"})
  void eachBadInputIsOneLineAndExitCode2(String name, String args, String expected,
      @TempDir Path dir) throws IOException {
    Outcome o = blis(argv(dir, args));
    assertUsageError(name, o, expected);
    for (String leak : List.of("CoercionConfig", "StreamReadFeature", "No content to map",
        "Source:", "REDACTED", "JsonToken", "java.", "`", "OutOfMemory", "Input length =")) {
      assertThat(o.err()).as(name).doesNotContain(leak);
    }
  }

  @Test
  void aByteOrderMarkChangesNothing(@TempDir Path dir) throws IOException {
    Path trace = dir.resolve("t.csv");
    WorkloadCliTest.ok("run", "--num-requests", "20", "--trace-out", trace.toString());
    Path bomTrace = Files.write(dir.resolve("bom.csv"), withBom(Files.readAllBytes(trace)));
    Path bomGzTrace = Files.write(dir.resolve("bom.csv.gz"), gzip("\uFEFF" + Files.readString(trace)));
    String plain = WorkloadCliTest.ok("replay", "--trace", trace.toString()).out();
    assertThat(WorkloadCliTest.ok("replay", "--trace", bomTrace.toString()).out()).isEqualTo(plain);
    assertThat(WorkloadCliTest.ok("replay", "--trace", bomGzTrace.toString()).out()).isEqualTo(plain);

    Path spec = write(dir, "spec.yaml", SPEC);
    Path bomSpec = Files.write(dir.resolve("bom-spec.yaml"), withBom(SPEC.getBytes(StandardCharsets.UTF_8)));
    assertThat(WorkloadCliTest.ok("run", "--workload-spec", bomSpec.toString()).out())
        .isEqualTo(WorkloadCliTest.ok("run", "--workload-spec", spec.toString()).out());

    Path profile = write(dir, "profile.yaml", PROFILE);
    Path bomProfile = Files.write(dir.resolve("bom-profile.yaml"), withBom(PROFILE.getBytes(StandardCharsets.UTF_8)));
    assertThat(WorkloadCliTest.ok("run", "--inference-perf", bomProfile.toString()).out())
        .isEqualTo(WorkloadCliTest.ok("run", "--inference-perf", profile.toString()).out());

    String gt = GT_HEADER + "0,0,0.000,1,300,40,1000.0,20.0\n1,0,250.0,1,310,40,1000.0,20.0\n";
    Path csv = write(dir, "gt.csv", gt);
    Path bomCsv = Files.write(dir.resolve("bom-gt.csv"), withBom(gt.getBytes(StandardCharsets.UTF_8)));
    assertThat(WorkloadCliTest.ok("replay", "--trace", bomCsv.toString(), "--inference-perf", profile.toString()).out())
        .isEqualTo(WorkloadCliTest.ok("replay", "--trace", csv.toString(), "--inference-perf", profile.toString()).out());
  }

  @Test
  void aYamlFlowMappingSpecRunsLikeItsBlockForm(@TempDir Path dir) throws IOException {
    Path block = write(dir, "block.yaml", SPEC);
    Path flow = write(dir, "flow.yaml", "{aggregate_rate: 5, num_requests: 10, clients: [{id: chat,"
        + " input: {type: gaussian, mean: 100, std: 10, min: 1, max: 200},"
        + " output: {type: constant, value: 5}}]}\n");
    assertThat(WorkloadCliTest.ok("run", "--workload-spec", flow.toString()).out())
        .isEqualTo(WorkloadCliTest.ok("run", "--workload-spec", block.toString()).out());
  }

  private static byte[] withBom(byte[] text) {
    byte[] r = new byte[text.length + 3];
    r[0] = (byte) 0xEF;
    r[1] = (byte) 0xBB;
    r[2] = (byte) 0xBF;
    System.arraycopy(text, 0, r, 3, text.length);
    return r;
  }
}
