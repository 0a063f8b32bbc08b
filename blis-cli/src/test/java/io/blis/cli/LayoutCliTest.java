package io.blis.cli;

import static io.blis.cli.BlisCliTest.blis;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --pp}, {@code --dp}, {@code --ep}: pipeline, data and expert parallelism end to end. */
class LayoutCliTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private static JsonNode run(String... extra) throws Exception {
    String[] base = {"run", "--rate", "30", "--num-requests", "200", "--prompt-tokens", "512",
        "--output-tokens", "64", "--output-tokens-stdev", "16", "--seed", "7"};
    String[] args = new String[base.length + extra.length];
    System.arraycopy(base, 0, args, 0, base.length);
    System.arraycopy(extra, 0, args, base.length, extra.length);
    BlisCliTest.Outcome o = blis(args);
    assertThat(o.code()).as(o.err()).isZero();
    return JSON.readTree(o.out());
  }

  private static long injected(JsonNode instance) {
    return instance.path("metrics").path("injected_requests").asLong();
  }

  @Test
  void dataParallelRanksAreSchedulersOfTheirOwnBehindOneInstance() throws Exception {
    JsonNode one = run("--model", "llama-3.1-8b");
    JsonNode dp2 = run("--model", "llama-3.1-8b", "--dp", "2");
    assertThat(dp2.path("overall").path("completed_requests").asLong()).isEqualTo(200);
    // two ranks, each with the whole KV cache of its GPU, sharing the load evenly
    JsonNode ranks = dp2.path("instances");
    assertThat(ranks).hasSize(2);
    assertThat(ranks.get(0).path("kv_total_blocks").asLong())
        .isEqualTo(ranks.get(1).path("kv_total_blocks").asLong())
        .isEqualTo(one.path("engine").path("kv_total_blocks").asLong());
    assertThat(injected(ranks.get(0))).isBetween(80L, 120L);
    assertThat(injected(ranks.get(0)) + injected(ranks.get(1))).isEqualTo(200);
    // half the load per GPU: shorter steps, lower latency than one GPU alone
    assertThat(dp2.path("overall").path("itl_ms").path("mean").asDouble())
        .isLessThan(one.path("overall").path("itl_ms").path("mean").asDouble());
  }

  @Test
  void theClusterRouterPicksInstancesAndEachInstanceItsRank() throws Exception {
    // always-busiest sees two instances of two ranks: it piles onto one instance, whose two
    // ranks share that load; the other instance's ranks get only what the first cannot take
    JsonNode r = run("--model", "llama-3.1-8b", "--num-instances", "2", "--dp", "2", "--router", "always-busiest");
    JsonNode ranks = r.path("instances");
    assertThat(ranks).hasSize(4);
    long first = injected(ranks.get(0)) + injected(ranks.get(1));
    long second = injected(ranks.get(2)) + injected(ranks.get(3));
    assertThat(first + second).isEqualTo(200);
    assertThat(first).isGreaterThan(second);
    assertThat(injected(ranks.get(0))).isPositive();
    assertThat(injected(ranks.get(1))).isPositive();
    JsonNode rr = run("--model", "llama-3.1-8b", "--num-instances", "2", "--dp", "2");
    assertThat(injected(rr.path("instances").get(0)) + injected(rr.path("instances").get(1))).isEqualTo(100);
  }

  @Test
  void expertParallelismAndItsVllmFlagAreTheSame() throws Exception {
    JsonNode ep = run("--model", "mixtral-8x7b", "--tp", "2", "--dp", "2", "--ep", "4");
    JsonNode flag = run("--model", "mixtral-8x7b", "--tp", "2", "--dp", "2", "--enable-expert-parallel");
    assertThat(flag).isEqualTo(ep);
    JsonNode noEp = run("--model", "mixtral-8x7b", "--tp", "2", "--dp", "2");
    assertThat(noEp).isNotEqualTo(ep); // all-to-all instead of the all-gather
    assertThat(ep.path("overall").path("completed_requests").asLong()).isEqualTo(200);
  }

  @Test
  void pipelineParallelRunsBatchesInFlightOverAStageShareOfTheCache() throws Exception {
    JsonNode tp2 = run("--model", "llama-2-70b", "--tp", "4");
    JsonNode pp2 = run("--model", "llama-2-70b", "--tp", "4", "--pp", "2");
    // two schedulers (batches in flight), each with half the blocks of a stage, and a stage holds
    // half the layers: together about twice the tokens of TP 4 alone (less the weights freed)
    JsonNode ves = pp2.path("instances");
    assertThat(ves).hasSize(2);
    assertThat(injected(ves.get(0)) + injected(ves.get(1))).isEqualTo(200);
    assertThat(injected(ves.get(0))).isPositive();
    assertThat(injected(ves.get(1))).isPositive();
    long tp4Blocks = tp2.path("engine").path("kv_total_blocks").asLong();
    long perVe = ves.get(0).path("kv_total_blocks").asLong();
    assertThat(perVe).isGreaterThan(tp4Blocks / 2);
    assertThat(pp2.path("overall").path("completed_requests").asLong()).isEqualTo(200);
  }

  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(strings = {"16 1 1 1", "8 2 1 1", "8 1 2 16", "8 1 2 1",
      "1 1 16 16"})
  void deepSeekV3OnSixteenH100sRunsAndStaysAboveItsRooflineFloor(String layout) throws Exception {
    String[] d = layout.split(" ");
    JsonNode r = run("--model", "deepseek-v3", "--gpu", "H100", "--tp", d[0], "--pp", d[1], "--dp", d[2],
        "--ep", d[3]);
    assertThat(r.path("overall").path("completed_requests").asLong()).isEqualTo(200);
    // floor: every decode step streams at least this GPU's share of the weights that are not routed
    // experts (fp8: 1 byte each) through HBM; the experts it touches and the KV cache come on top
    io.blis.api.ModelSpec m = io.blis.latency.catalog.ModelCatalog.byName("deepseek-v3");
    double experts = (double) m.numMoeLayers() * m.numExperts() * io.blis.latency.catalog.ModelSizes.expertParams(m);
    double dense = io.blis.latency.catalog.ModelSizes.parameterCount(m) - experts;
    double floorMs = dense * m.weightBytesPerParam() / Integer.parseInt(d[0])
        / io.blis.latency.catalog.GpuCatalog.byName("H100").memoryBandwidthBytesPerS() * 1e3;
    double itl = r.path("overall").path("itl_ms").path("mean").asDouble();
    assertThat(itl).as("ITL of %s against a floor of %.2f ms", layout, floorMs).isGreaterThan(floorMs);
    // and within what reading every weight of the GPU plus its link traffic could take at 1/10 of peak
    assertThat(itl).isLessThan(10 * 80e9 / 3.35e12 * 1e3);
  }

  @Test
  void deepSeekV3TooBigForEightH100sSaysWhatFits() throws Exception {
    BlisCliTest.Outcome o = blis("run", "--model", "deepseek-v3", "--gpu", "H100", "--tp", "8", "--num-requests", "5");
    assertThat(o.code()).isNotZero();
    assertThat(o.err()).contains("does not fit on 8 x H100").contains("tensor parallelism that fits is 16");
  }

  @Test
  void layoutsVllmRefusesAreOneLineErrors() throws Exception {
    BlisCliTest.Outcome o = blis("run", "--model", "mixtral-8x7b", "--tp", "2", "--dp", "2", "--ep", "3",
        "--num-requests", "5");
    assertThat(o.code()).isNotZero();
    assertThat(o.err()).contains("--ep must be 1 or --tp x --dp = 4").doesNotContain("Exception");
    o = blis("run", "--model", "llama-3.1-8b", "--dp", "2", "--enable-expert-parallel",
        "--num-requests", "5");
    assertThat(o.code()).isNotZero();
    assertThat(o.err()).contains("needs a mixture-of-experts model").doesNotContain("Exception");
    // at tp x dp = 1 as well: the flag never passes silently on a dense model
    o = blis("run", "--model", "llama-3.1-8b", "--enable-expert-parallel", "--num-requests", "5");
    assertThat(o.code()).isNotZero();
    assertThat(o.err()).contains("needs a mixture-of-experts model").doesNotContain("Exception");
    o = blis("run", "--model", "llama-3.1-8b", "--pp", "0", "--num-requests", "5");
    assertThat(o.code()).isNotZero();
    assertThat(o.err()).contains("--pp must be at least 1");
  }

  @Test
  void policyBundlePoolsCarryTheLayout(@TempDir Path dir) throws Exception {
    Path bundle = dir.resolve("pools.yaml");
    Files.writeString(bundle, "pools:\n  - name: moe\n    instances: 1\n    model: mixtral-8x7b\n    tp: 2\n"
        + "    data_parallel_size: 2\n    enable_expert_parallel: true\n");
    JsonNode fromBundle = run("--policy-config", bundle.toString());
    JsonNode fromFlags = run("--model", "mixtral-8x7b", "--tp", "2", "--dp", "2", "--ep", "4");
    assertThat(fromBundle.path("overall")).isEqualTo(fromFlags.path("overall"));
    Files.writeString(bundle, "pools:\n  - name: moe\n    instances: 1\n    model: mixtral-8x7b\n    tp: 2\n"
        + "    dp: 2\n    ep: 4\n    enable_expert_parallel: true\n");
    BlisCliTest.Outcome o = blis("run", "--policy-config", bundle.toString(), "--num-requests", "5");
    assertThat(o.code()).isNotZero();
    assertThat(o.err()).contains("pools.yaml").contains("not both");
  }
}
