package io.blis.workload.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.workload.MiniEngine;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.TestSupport;
import io.blis.workload.inferenceperf.InferencePerfProfile;
import io.blis.workload.inferenceperf.InferencePerfWorkload;
import io.blis.workload.inferenceperf.LoadStage;
import io.blis.workload.inferenceperf.SharedPrefixData;
import io.blis.workload.spec.WorkloadSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TraceRoundTripTest {

  static final String SPEC = """
      seed: %d
      aggregate_rate: 12
      num_requests: 400
      clients:
        - id: chat
          tenant: t1
          slo_class: critical
          input: {type: lognormal, mu: 5, sigma: 0.5, min: 4, max: 2000}
          output: {type: exponential, mean: 60, min: 1, max: 500}
          prefix_group: sys
          prefix_length: 37
          timeout_s: 20
          session: {rounds: 3, think_time_s: 1.5, accumulate_context: true}
        - id: docs
          rate_fraction: 0.5
          arrival: {process: gamma, cv: 3}
          input: {type: gaussian, mean: 800, std: 200, min: 50, max: 2000}
          output: {type: constant, value: 16}
          session: {rounds: 2, think_time_s: 0.5}
        - id: plain
          arrival: {process: weibull, cv: 1.5}
          input: {type: constant, value: 9}
          output: {type: constant, value: 3}
      """;

  static final ToLongFunction<RequestSpec> SERVICE =
      r -> 30_000L + 3L * r.inputTokens() + 9_000L * r.outputTokens();

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1, 99})
  void simulateTraceReplayIsIdentical(long seed, @TempDir Path dir) throws Exception {
    for (boolean tokenIds : new boolean[] {false, true}) {
      Path file = dir.resolve("t-" + tokenIds + ".csv.gz");
      WorkloadSpec spec = WorkloadSpec.parse(SPEC.formatted(seed), "rt.yaml");
      List<MiniEngine.Served> original;
      try (TraceWriter w = TraceWriter.create(file, TraceHeader.of(seed, tokenIds, "round trip"))) {
        original = MiniEngine.run(spec.source(), SERVICE, w::write);
      }
      List<MiniEngine.Served> replayed;
      try (RequestSource src = TraceReader.open(file)) {
        replayed = MiniEngine.run(src, SERVICE);
      }
      assertThat(replayed).hasSameSizeAs(original);
      assertThat(original.stream().filter(s -> s.request().round() > 0).count()).isGreaterThan(100);
      List<RequestSpec> a = new ArrayList<>();
      List<RequestSpec> b = new ArrayList<>();
      for (int i = 0; i < original.size(); i++) {
        MiniEngine.Served o = original.get(i);
        MiniEngine.Served r = replayed.get(i);
        assertThat(r.finishUs()).isEqualTo(o.finishUs());
        assertThat(withoutTokens(r.request())).isEqualTo(withoutTokens(o.request()));
        if (tokenIds) {
          assertThat(r.request()).isEqualTo(o.request());
        }
        a.add(o.request());
        b.add(r.request());
      }
      // Cache-hit structure survives: common prefixes of every pair have the same length.
      a.sort(java.util.Comparator.comparingLong(RequestSpec::id));
      b.sort(java.util.Comparator.comparingLong(RequestSpec::id));
      for (int i = 0; i < 250; i++) {
        for (int j = i + 1; j < 250; j++) {
          assertThat(commonPrefix(b.get(i), b.get(j)))
              .as("requests %d and %d", i, j)
              .isEqualTo(commonPrefix(a.get(i), a.get(j)));
        }
      }
    }
  }

  @Test
  void writeReadWriteIsByteIdentical(@TempDir Path dir) throws Exception {
    InferencePerfProfile p = new InferencePerfProfile(
        new SharedPrefixData(3, 4, 50, 80, 20), List.of(new LoadStage(4, 30)), 1, 300);
    Path first = dir.resolve("a.csv");
    Path second = dir.resolve("b.csv");
    try (TraceWriter w = TraceWriter.create(first, TraceHeader.of(5, false, "ip"))) {
      TestSupport.drain(InferencePerfWorkload.synthetic(p, 5)).forEach(w::write);
    }
    try (TraceWriter w = TraceWriter.create(second, TraceReader.header(first));
        RequestSource src = TraceReader.open(first)) {
      TestSupport.drain(src).forEach(w::write);
    }
    assertThat(Files.readAllBytes(second)).isEqualTo(Files.readAllBytes(first));
    assertThat(Files.readAllLines(first)).hasSize(2 + 120);
    assertThat(TraceReader.header(first)).isEqualTo(TraceHeader.of(5, false, "ip"));
    assertThat(TraceReader.isBlisTrace(first)).isTrue();
    Path csv = dir.resolve("gt.csv");
    Files.writeString(csv, String.join(",", GroundTruthTrace.COLUMNS) + "\n");
    assertThat(TraceReader.isBlisTrace(csv)).isFalse();
  }

  @Test
  void adapterColumnIsWrittenWhenAskedAndReadWhenThere(@TempDir Path dir) throws Exception {
    String adapters = SPEC.formatted(4)
        .replace("  - id: chat\n", "  - id: chat\n    adapter: chat-lora\n")
        .replace("  - id: docs\n", "  - id: docs\n    adapters: {count: 20, zipf: 1.0, prefix: \"lora-\", base_share: 0.3}\n");
    String both = adapters.replace("  - id: plain\n", "  - id: plain\n    model: small\n");
    for (boolean tokenIds : new boolean[] {false, true}) {
      for (boolean models : new boolean[] {false, true}) {
        Path file = dir.resolve("a-" + tokenIds + "-" + models + ".csv");
        WorkloadSpec spec = WorkloadSpec.parse(models ? both : adapters, "a.yaml");
        List<MiniEngine.Served> original;
        try (TraceWriter w = TraceWriter.create(Files.newOutputStream(file), TraceHeader.of(4, tokenIds, "lora"),
            false, models, true)) {
          original = MiniEngine.run(spec.source(), SERVICE, w::write);
        }
        assertThat(Files.readAllLines(file).get(1)).isEqualTo(String.join(",", TraceFormat.COLUMNS)
            + (models ? ",model" : "") + ",adapter" + (tokenIds ? ",token_ids" : ""));
        List<MiniEngine.Served> replayed;
        try (RequestSource src = TraceReader.open(file)) {
          replayed = MiniEngine.run(src, SERVICE);
        }
        assertThat(replayed).hasSameSizeAs(original);
        for (int i = 0; i < original.size(); i++) {
          RequestSpec o = original.get(i).request();
          RequestSpec r = replayed.get(i).request();
          assertThat(r.adapter()).isEqualTo(o.adapter());
          assertThat(r.model()).isEqualTo(o.model());
          assertThat(withoutTokens(r)).isEqualTo(withoutTokens(o));
          if (tokenIds) {
            assertThat(r).isEqualTo(o);
          }
        }
        List<String> names = original.stream().map(x -> x.request().adapter()).distinct().toList();
        assertThat(names).contains("chat-lora", "lora-0", "");
        assertThat(original.stream().filter(x -> x.request().round() > 0 && !x.request().adapter().isEmpty()))
            .isNotEmpty();
      }
    }
    // a request naming an adapter, and a trace without the column
    RequestSpec named = TestSupport.drain(WorkloadSpec.parse(adapters, "a.yaml").source()).stream()
        .filter(r -> !r.adapter().isEmpty()).findFirst().orElseThrow();
    try (TraceWriter w = new TraceWriter(new java.io.StringWriter(), TraceHeader.of(4, false, "x"), true)) {
      assertThatThrownBy(() -> w.write(named)).hasMessage("request " + named.id() + " names LoRA adapter '"
          + named.adapter() + "', and this trace has no adapter column (open it with adapters)");
    }
    try (TraceWriter w = new TraceWriter(new java.io.StringWriter(), TraceHeader.of(4, false, "x"), false, true)) {
      assertThatThrownBy(() -> w.write(named.withAdapter("a,b"))).hasMessage("request " + named.id()
          + ": adapter 'a,b' cannot be written to a trace (no commas, quotes or line breaks)");
    }
  }

  @Test
  void aWrittenAdapterColumnIsReadBack(@TempDir Path dir) throws Exception {
    String header = "# blis-trace {\"version\":1,\"time_unit\":\"us\",\"token_seed\":1,\"token_ids\":false}\n";
    String columns = String.join(",", TraceFormat.COLUMNS);
    Path f = dir.resolve("adapters.csv");
    Files.writeString(f, header + columns + ",adapter\n"
        + "0,100,20,5,g,8,123,-1,0,standard,,0,0,lora-3\n"
        + "1,200,20,5,g,8,124,-1,0,standard,,0,0,\n");
    List<RequestSpec> rs;
    try (RequestSource src = TraceReader.open(f)) {
      rs = TestSupport.drain(src);
    }
    assertThat(rs).extracting(RequestSpec::adapter).containsExactly("lora-3", "");
    assertThat(rs).extracting(RequestSpec::model).containsExactly("", "");
    Files.writeString(f, header + columns + ",model,adapter\n" + "0,100,20,5,g,8,123,-1,0,standard,,0,0,m,lora-3\n");
    try (RequestSource src = TraceReader.open(f)) {
      assertThat(TestSupport.drain(src)).singleElement()
          .satisfies(r -> assertThat(r.model() + "/" + r.adapter()).isEqualTo("m/lora-3"));
    }
    Files.writeString(f, header + columns + ",adapter,model\n" + "0,100,20,5,g,8,123,-1,0,standard,,0,0,lora-3,m\n");
    assertThatThrownBy(() -> TraceReader.open(f)).hasMessageStartingWith(f + ":2: column header is '")
        .hasMessageContaining("with a model and then an adapter column");
    Files.writeString(f, header + columns + ",adapter\n" + "0,100,20,5,g,8,123,-1,0,standard,,0,0\n");
    assertThatThrownBy(() -> TraceReader.open(f)).hasMessageStartingWith(f + ":3:")
        .hasMessageContaining("expected 14 fields");
  }

  @Test
  void badRowsNameFileLineAndField(@TempDir Path dir) throws Exception {
    String header = "# blis-trace {\"version\":1,\"time_unit\":\"us\",\"token_seed\":1,\"token_ids\":false}\n"
        + String.join(",", TraceFormat.COLUMNS) + "\n";
    String good = "0,100,20,5,g,8,123,-1,0,standard,,0,0\n";
    Path f = dir.resolve("bad.csv");
    Files.writeString(f, header + good + "1,50,20,5,g,8,124,-1,0,standard,,0,0\n");
    assertThatThrownBy(() -> TraceReader.open(f)).hasMessageStartingWith(f + ":4:")
        .hasMessageContaining("arrival order");
    Files.writeString(f, header + good + "1,200,NaN,5,g,8,124,-1,0,standard,,0,0\n");
    assertThatThrownBy(() -> TraceReader.open(f)).hasMessageStartingWith(f + ":4:")
        .hasMessageContaining("input_tokens");
    Files.writeString(f, header + good + "1,200,20,-5,g,8,124,-1,0,standard,,0,0\n");
    assertThatThrownBy(() -> TraceReader.open(f)).hasMessageContaining("output_tokens");
    Files.writeString(f, header + good + "1,200,20,5,g,8,124,-1,0,standard,,0\n");
    assertThatThrownBy(() -> TraceReader.open(f)).hasMessageStartingWith(f + ":4:")
        .hasMessageContaining("expected 13 fields");
    Files.writeString(f, header.replace(",timeout_us", "") + good);
    assertThatThrownBy(() -> TraceReader.open(f)).hasMessageStartingWith(f + ":2:")
        .hasMessageContaining("timeout_us");
    Files.writeString(f, "req,stage\n" + good);
    assertThatThrownBy(() -> TraceReader.open(f)).hasMessageContaining("not a BLIS trace");
  }

  private static RequestSpec withoutTokens(RequestSpec r) {
    return new RequestSpec(r.id(), r.arrivalTimeUs(), new int[r.inputTokens()], r.outputTokens(),
        r.sloClass(), r.tenant(), r.prefixGroup(), r.prefixLength(), r.sessionId(), r.round(),
        r.timeoutUs(), r.stage());
  }

  private static int commonPrefix(RequestSpec x, RequestSpec y) {
    int[] a = x.promptTokens();
    int[] b = y.promptTokens();
    int n = Math.min(a.length, b.length);
    int i = 0;
    while (i < n && a[i] == b[i]) {
      i++;
    }
    return i;
  }
}
