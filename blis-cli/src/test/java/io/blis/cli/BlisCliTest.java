package io.blis.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class BlisCliTest {

  static final ObjectMapper JSON = new ObjectMapper();

  record Outcome(int code, String out, String err) {}

  static Outcome blis(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = BlisCli.execute(args, new PrintWriter(out), new PrintWriter(err));
    return new Outcome(code, out.toString(), err.toString());
  }

  @Test
  void asyncSchedulingCanBeSwitchedOffAndDelaysAdmissionWhenOn() throws Exception {
    String[] common = {"run", "--rate", "20", "--num-requests", "200", "--output-tokens", "64",
        "--output-tokens-stdev", "0", "--prompt-tokens", "256", "--prompt-tokens-stdev", "0"};
    Outcome on = blis(common);
    String[] offArgs = java.util.Arrays.copyOf(common, common.length + 1);
    offArgs[common.length] = "--no-async-scheduling";
    Outcome off = blis(offArgs);
    assertThat(on.code()).isZero();
    assertThat(off.code()).isZero();
    double ttftOn = JSON.readTree(on.out()).path("overall").path("ttft_ms").path("mean").asDouble();
    double ttftOff = JSON.readTree(off.out()).path("overall").path("ttft_ms").path("mean").asDouble();
    // With requests arriving while steps run, async scheduling admits them one step later.
    assertThat(ttftOn).isGreaterThan(ttftOff);
  }

  @Test
  void noArgumentsRunsTheEmbeddedDefaultAndPrintsValidJson() throws Exception {
    Outcome o = blis();
    assertThat(o.err()).isEmpty();
    assertThat(o.code()).isZero();
    JsonNode root = JSON.readTree(o.out());
    assertThat(root.path("overall").path("injected_requests").asLong()).isEqualTo(100);
    assertThat(root.path("overall").path("completed_requests").asLong()).isEqualTo(100);
    assertThat(root.path("overall").path("e2e_ms").path("mean").asDouble()).isPositive();
    assertThat(root.path("engine").path("kv_total_blocks").asLong()).isPositive();
    assertThat(root.has("requests")).isFalse();
  }

  @Test
  void sameSeedSameBytesOtherSeedOtherResult() {
    String[] args = {"run", "--num-requests", "40", "--rate", "8", "--seed", "7"};
    Outcome a = blis(args);
    Outcome b = blis(args);
    Outcome c = blis("run", "--num-requests", "40", "--rate", "8", "--seed", "8");
    assertThat(a.out()).isEqualTo(b.out());
    assertThat(c.out()).isNotEqualTo(a.out());
  }

  @Test
  void resultsPathAndPerRequestRecords(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("sub/result.json");
    Outcome o = blis("run", "--num-requests", "12", "--per-request", "--results-path",
        file.toString(), "--total-kv-blocks", "500", "--max-num-seqs", "4");
    assertThat(o.code()).isZero();
    assertThat(Files.readString(file)).isEqualTo(o.out());
    JsonNode root = JSON.readTree(o.out());
    assertThat(root.path("requests")).hasSize(12);
    assertThat(root.path("engine").path("kv_total_blocks").asLong()).isEqualTo(500);
  }

  /**
   * The oracle of the streamed tail: a field appended to a pretty-printed JSON object without
   * touching the rest of its text, {@code "key" : value} before the closing brace, indented like the
   * object's other fields.
   */
  private static String appendField(String json, String key, com.fasterxml.jackson.databind.JsonNode value) {
    String body = json.stripTrailing();
    if (!body.endsWith("}")) {
      throw new IllegalStateException("not a JSON object");
    }
    String head = body.substring(0, body.length() - 1).stripTrailing();
    boolean empty = head.endsWith("{");
    return head + (empty ? "\n" : ",\n") + Cli.field(key, value) + "\n}\n";
  }

  /**
   * The result is streamed to the file and to stdout (never one string): the same bytes as the
   * document built whole with the appended fields, which stay last, in order, and parse.
   */
  @Test
  void theStreamedResultIsTheWholeDocumentWithItsAppendedFields(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("r.json");
    Outcome o = blis("run", "--num-requests", "40", "--per-request", "--intervals", "--results-path", file.toString());
    assertThat(o.code()).as(o.err()).isZero();
    assertThat(Files.readString(file)).isEqualTo(o.out());
    assertThat(blis("run", "--num-requests", "40", "--per-request", "--intervals").out()).isEqualTo(o.out());
    // what appendField makes of the document without the interval: byte for byte
    JsonNode root = JSON.readTree(o.out());
    Outcome bare = blis("run", "--num-requests", "40", "--per-request");
    assertThat(o.out()).isEqualTo(appendField(bare.out(), "prediction_interval", root.get("prediction_interval")));
    // two appended fields stay last, in order, after the streamed records
    Outcome both = blis("run", "--num-requests", "40", "--per-request", "--intervals", "--vllm-version", "0.11.0");
    List<String> names = new java.util.ArrayList<>();
    JSON.readTree(both.out()).fieldNames().forEachRemaining(names::add);
    assertThat(names.subList(names.size() - 3, names.size())).containsExactly("requests", "vllm_version",
        "prediction_interval");
    assertThat(both.out()).endsWith("\n}\n");
  }

  @Test
  void aMistypedCommandOrOptionNamesTheNearestOnes() {
    Outcome cmd = blis("runn");
    assertThat(cmd.code()).isEqualTo(2);
    assertThat(cmd.err().strip()).contains("'runn'").contains("did you mean 'run'?").doesNotContain("\n");
    Outcome opt = blis("run", "--num-requets", "5");
    assertThat(opt.code()).isEqualTo(2);
    assertThat(opt.err()).contains("'--num-requets'").contains("'--num-requests'");
  }

  @Test
  void anEndpointPortOutOfRangeNamesTheFlag() {
    Outcome o = blis("observe", "--endpoint", "http://127.0.0.1:99999/v1", "--served-model", "x",
        "--num-requests", "1", "--out", "unused-dir");
    assertThat(o.code()).isEqualTo(2);
    assertThat(o.err()).startsWith("blis observe: --endpoint: port 99999 is not a TCP port (1-65535)");
    assertThat(java.nio.file.Path.of("unused-dir")).doesNotExist();
  }

  @Test
  void flagsChangeTheSimulation() throws Exception {
    JsonNode base = JSON.readTree(blis("run", "--num-requests", "30").out());
    JsonNode inline = JSON.readTree(blis("run", "--num-requests", "30", "--latency-model",
        "blackbox", "--coefficients", "beta=20000,1,100").out());
    double baseE2e = base.path("overall").path("e2e_ms").path("mean").asDouble();
    double slowE2e = inline.path("overall").path("e2e_ms").path("mean").asDouble();
    assertThat(slowE2e).isGreaterThan(baseE2e);
  }

  @Test
  void cpuTierFlagsSizeTheTier() throws Exception {
    JsonNode root = JSON.readTree(blis("run", "--num-requests", "5", "--kv-offloading-size-gib",
        "8").out());
    // Llama-2-7B, TP1: K and V x 32 layers x 32 heads x 128 dims x 2 bytes x 16 tokens
    long blockBytes = 2L * 32 * 32 * 128 * 2 * 16;
    assertThat(root.path("engine").path("kv_cpu_tier_blocks").asLong())
        .isEqualTo((8L << 30) / blockBytes);
  }

  @Test
  void gpuMayBeADeviceNameOrAnEntryOfAFileOfSeveralGpus(@TempDir Path dir) throws Exception {
    JsonNode h100 = JSON.readTree(blis("run", "--num-requests", "5").out());
    JsonNode a100 = JSON.readTree(blis("run", "--num-requests", "5", "--gpu", "NVIDIA A100-SXM4-40GB").out());
    // Llama-2-7B (12.6 GiB of weights) on 39.6 GiB leaves less than half the KV blocks of 79.19 GiB.
    assertThat(a100.path("engine").path("kv_total_blocks").asLong())
        .isLessThan(h100.path("engine").path("kv_total_blocks").asLong() / 2);
    Path specs = dir.resolve("specs.json");
    Files.writeString(specs, "{\"big\": {\"bf16_dense_tflops\": 989.4, \"hbm_bandwidth_tb_s\": 3.35,"
        + " \"memory_gib\": 79.19}}");
    JsonNode entry = JSON.readTree(blis("run", "--num-requests", "5", "--gpu", specs + "#big").out());
    assertThat(entry.path("engine").path("kv_total_blocks").asLong())
        .isEqualTo(h100.path("engine").path("kv_total_blocks").asLong());
    Outcome missing = blis("run", "--num-requests", "5", "--gpu", specs + "#small");
    assertThat(missing.code()).isEqualTo(2);
    assertThat(missing.err()).contains(specs.toString()).contains("no GPU entry 'small' (entries: big)");
  }

  @Test
  void moreInstancesLowerLatencyUnderLoad() throws Exception {
    String[] common = {"run", "--num-requests", "60", "--rate", "40", "--max-num-seqs", "4"};
    JsonNode one = JSON.readTree(blis(common).out());
    String[] two = java.util.Arrays.copyOf(common, common.length + 4);
    System.arraycopy(new String[] {"--num-instances", "2", "--routing-policy", "least-loaded"}, 0,
        two, common.length, 4);
    JsonNode twoRes = JSON.readTree(blis(two).out());
    assertThat(twoRes.path("engine").path("instances").asInt()).isEqualTo(2);
    assertThat(twoRes.path("overall").path("e2e_ms").path("mean").asDouble())
        .isLessThan(one.path("overall").path("e2e_ms").path("mean").asDouble());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "unknown flag|run --bogus 1|Unknown option",
      "negative rate|run --rate -3|--rate must be a positive number",
      "malformed coefficients|run --coefficients alpha=1,x|is not a number",
      "missing coefficient file|run --coefficients nope.yaml|no such file",
      "unknown model|run --model no-such-model|unknown model 'no-such-model'",
      "unknown gpu|run --gpu Z999|unknown GPU 'Z999'",
      "unknown latency model|run --latency-model warp|unknown latency model 'warp'",
      "unknown scheduler|run --scheduler lifo|unknown scheduler 'lifo'",
      "non-numeric value|run --num-requests many|'many'",
      "bad utilization|run --gpu-memory-utilization 1.5|--gpu-memory-utilization must be in",
      "unknown command|fly|Unmatched argument",
      "negative cpu blocks|run --kv-cpu-blocks -1|--kv-cpu-blocks must be >= 0",
      "zero instances|run --num-instances 0|--num-instances must be between 1 and 4096",
      "unknown router|run --routing-policy random|unknown router 'random'"})
  void badInputPrintsOneLineAndExitsWithUsageError(String name, String args, String expected) {
    assertUsageError(name, blis(args.split(" ")), expected);
  }

  /** Exit 2, nothing on stdout, one line on stderr containing {@code expected}, no stack trace. */
  static void assertUsageError(String name, Outcome o, String expected) {
    assertThat(o.code()).as(name + ": " + o.err()).isEqualTo(2);
    assertThat(o.out()).isEmpty();
    assertThat(o.err().strip()).doesNotContain("\n").contains(expected)
        .doesNotContain("Exception").doesNotContain("\tat ");
  }

  @Test
  void helpListsRunAndExitsZero() {
    Outcome o = blis("--help");
    assertThat(o.code()).isZero();
    assertThat(o.out()).contains("run");
  }

  /**
   * Whether a command's {@code --help} text offers option {@code name}: in the usage synopsis
   * ({@code [--name...}) or as an entry of the option list (a line starting with it, or with an
   * alias before it); a mention inside another option's description does not count.
   */
  static boolean listsOption(String help, String name) {
    java.util.regex.Pattern entry = java.util.regex.Pattern.compile(
        "^ {0,8}(-\\w, )?([-\\w]+, )*" + java.util.regex.Pattern.quote(name) + "([=,\\s\\[]|$)");
    return help.contains("[" + name + "=") || help.contains("[" + name + "]") || help.contains("[" + name + " ")
        || help.lines().anyMatch(l -> entry.matcher(l).find());
  }
}
