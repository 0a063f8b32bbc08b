package io.blis.workload.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Go BLIS's TraceV2 pair and its older trace CSV with token arrays. */
class GoBlisTracesTest {

  @TempDir Path dir;

  static final String COLUMNS = String.join(",", TraceV2Reader.COLUMNS);

  static List<RequestSpec> all(RequestSource s) {
    List<RequestSpec> out = new ArrayList<>();
    RequestSpec r;
    while ((r = s.next()) != null) {
      out.add(r);
    }
    return out;
  }

  private Path write(String name, String text) throws IOException {
    Path p = dir.resolve(name);
    Files.writeString(p, text);
    return p;
  }

  private Path[] pair(String rows) throws IOException {
    return new Path[] {write("t.yaml", "trace_version: 3\ntime_unit: us\nmode: generated\nwarm_up_requests: 0\n"),
        write("t.csv", COLUMNS + "\n" + rows)};
  }

  @Test
  void rowsBecomeRequestsAtTheirSendTimes() throws IOException {
    Path[] p = pair("""
        7,c,ten,critical,s1,0,g,10,true,30,5,30,0,0,0,0,m,2500000,0,100,2000000,0,0,0,ok,,
        8,c,ten,,s1,1,g,10,true,25,0,25,0,0,0,0,,0,0,50,0,0,0,0,error,"reset, by peer",
        9,c,,batch,,0,,0,false,0,3,0,0,0,0,0,,0,40,1000,0,0,0,0,ok,,length
        """);
    assertThat(TraceV2Reader.isHeader(p[0])).isTrue();
    assertThat(TraceV2Reader.isData(p[1])).isTrue();
    assertThat(TraceV2Reader.pair(p[0])).containsExactly(p);
    assertThat(TraceV2Reader.pair(p[1])).containsExactly(p);
    NotedSource s = TraceV2Reader.open(p[0], p[1], 42);
    List<RequestSpec> rs = all(s.source());
    // sorted by send time (arrival time when send is 0)
    assertThat(rs).extracting(RequestSpec::id).containsExactly(8L, 9L, 7L);
    RequestSpec seven = rs.get(2);
    assertThat(seven.arrivalTimeUs()).isEqualTo(2_000_000);
    assertThat(seven.inputTokens()).isEqualTo(10 + 30); // the group prefix, then input_tokens
    assertThat(seven.prefixGroup()).isEqualTo("g");
    assertThat(seven.prefixLength()).isEqualTo(10);
    assertThat(seven.timeoutUs()).isEqualTo(500_000); // deadline_us - send time
    assertThat(seven.sloClass()).isEqualTo("critical");
    assertThat(seven.tenant()).isEqualTo("ten");
    assertThat(seven.sessionId()).isEqualTo(-1); // fixed mode: sent at its time
    RequestSpec eight = rs.get(0);
    assertThat(eight.outputTokens()).isEqualTo(1);
    assertThat(eight.sloClass()).isEqualTo("standard");
    assertThat(Arrays.copyOf(eight.promptTokens(), 10)).isEqualTo(Arrays.copyOf(seven.promptTokens(), 10));
    assertThat(rs.get(1).inputTokens()).isEqualTo(40); // server_input_tokens without a group
    assertThat(s.notes()).hasSize(3);
    assertThat(s.notes().get(0)).startsWith(p[1] + ":2: session_id has no meaning here");
    assertThat(s.notes().get(1)).startsWith(p[1] + ":2: model has no meaning here");
    assertThat(s.notes().get(2)).startsWith(p[1] + ":3: 1 row(s) with output_tokens 0 are simulated with 1");
    // the same pair and seed give the same requests
    assertThat(all(TraceV2Reader.open(p[0], p[1], 42).source())).isEqualTo(rs);
  }

  @Test
  void anAdapterColumnNamesEachRowsLoraAdapter() throws IOException {
    Path h = write("a.yaml", "trace_version: 3\ntime_unit: us\nmode: generated\nwarm_up_requests: 0\n");
    Path d = write("a.csv", COLUMNS + ",adapter\n1,c,,,,0,,0,false,5,5,5,0,0,0,0,,0,0,0,0,0,0,0,ok,,,sql\n"
        + "2,c,,,,0,,0,false,5,5,5,0,0,0,0,,0,0,10,0,0,0,0,ok,,,\n");
    assertThat(TraceV2Reader.hasAdapterColumn(d)).isTrue();
    NotedSource s = TraceV2Reader.open(h, d, 1);
    assertThat(all(s.source())).extracting(RequestSpec::adapter).containsExactly("sql", "");
    assertThat(s.notes()).noneMatch(n -> n.contains("adapter"));
    assertThat(TraceV2Reader.hasAdapterColumn(pair("1,c,,,,0,,0,false,5,5,5,0,0,0,0,,0,0,0,0,0,0,0,ok,,\n")[1]))
        .isFalse();
  }

  @Test
  void headerSettingsThatDoNotApplyAreNoted() throws IOException {
    Path h = write("h.yaml", """
        trace_version: 3
        time_unit: us
        mode: real
        warm_up_requests: 5
        server: {type: vllm, model: x, tensor_parallel: 2}
        network: {measured_rtt_ms: 1.5}
        kv_offload: {cpu_bytes_to_use: 1000}
        """);
    Path d = write("h.csv", COLUMNS + "\n1,c,,,,0,,0,false,5,5,5,0,0,0,0,,0,0,0,0,0,0,0,ok,,\n");
    List<String> notes = TraceV2Reader.open(h, d, 1).notes();
    assertThat(notes).containsExactly(
        h + ":4:1: warm_up_requests has no meaning here: the warm-up rows are simulated like the others"
            + " (Go BLIS leaves them out only when calibrating)",
        h + ":5:1: server is not applied: the simulated deployment comes from --model, --tp, --max-num-seqs,"
            + " --block-size, --gpu-memory-utilization, --max-model-len",
        h + ":6:1: network has no meaning here: there is no client network in the simulation",
        h + ":7:1: kv_offload has no meaning here: a run takes the CPU KV tier from its flags (blis replay"
            + " applies it)");
    // Go BLIS writes an empty network block when it measured no round trip: nothing to note
    Path empty = write("e.yaml", "trace_version: 3\ntime_unit: us\nmode: generated\nnetwork: {}\n");
    assertThat(TraceV2Reader.open(empty, d, 1).notes()).isEmpty();
  }

  @Test
  void badTraceV2FilesFailWithOneLineNamingTheirPlace() throws IOException {
    Path h = write("b.yaml", "trace_version: 3\n");
    String good = "1,c,,,,0,,0,false,5,5,5,0,0,0,0,,0,0,0,0,0,0,0,ok,,\n";
    Object[][] cases = {
        {COLUMNS + "\n" + good.replace("false,5,5", "false,x,5"), ":2:19: field 'input_tokens' = 'x': expected an integer"},
        {COLUMNS + "\n" + "1,c,,premium,,0,,0,false,5,5,5,0,0,0,0,,0,0,0,0,0,0,0,ok,,\n",
            ":2:6: field 'slo_class' = 'premium': expected an SLO class"},
        {COLUMNS + "\n" + good + good, ":3:1: field 'request_id' = '1': request_id 1 appears twice"},
        {COLUMNS + ",color\n" + good, ":1:" + (COLUMNS.length() + 2) + ": unknown column 'color'"},
        {COLUMNS.replace("server_input_tokens,", "") + "\n" + good, ":1: missing column 'server_input_tokens'"},
        {COLUMNS + "\n" + good.replace("error_message", "").replace("ok,,", "ok,\"open,") , ": a quoted field has no closing quote"},
        {COLUMNS + "\n", ": no requests: the TraceV2 data has its column line and no rows"},
        {COLUMNS + "\n" + good.replace("false,5,5,5", "false,0,5,5"), ":2:19: field 'input_tokens' = '0': a prompt needs at least one token"},
    };
    for (Object[] c : cases) {
      Path d = write("b.csv", (String) c[0]);
      assertThatThrownBy(() -> TraceV2Reader.open(h, d, 1)).as((String) c[1])
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith(d.toString())
          .hasMessageContaining((String) c[1])
          .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    }
    Path d = write("b.csv", COLUMNS + "\n" + good);
    Path badHeader = write("bh.yaml", "trace_version: 9\ntime_unit: us\n");
    assertThatThrownBy(() -> TraceV2Reader.open(badHeader, d, 1))
        .hasMessage(badHeader + ":1:1: trace_version must be 1, 2 or 3 (Go BLIS TraceV2), got 9");
    Path unknownKey = write("uk.yaml", "trace_version: 3\nflavor: x\n");
    assertThatThrownBy(() -> TraceV2Reader.open(unknownKey, d, 1))
        .hasMessageStartingWith(unknownKey + ":2:1: unknown key 'flavor'");
    assertThatThrownBy(() -> TraceV2Reader.pair(dir.resolve("lonely.yaml")))
        .hasMessageContaining("is missing");
  }

  @Test
  void tokenArrayTracesKeepTheirTokenIds() throws IOException {
    Path f = write("traces.csv", """
        arrival_time,request_id,model,prefill_tokens,decode_tokens
        0.0,req_0,llama,"[1,2,3,4,5]","[101,102,103]"
        0.3,req_1,llama,"[10, 20, 30]","[201,202,203,204]"
        0.05,req_2,llama,"[7]","[9]"
        """);
    assertThat(TokenArrayTraceReader.isTokenArrayTrace(f)).isTrue();
    List<RequestSpec> rs = all(TokenArrayTraceReader.open(f).source());
    assertThat(rs).extracting(RequestSpec::id).containsExactly(0L, 2L, 1L);
    assertThat(rs).extracting(RequestSpec::arrivalTimeUs).containsExactly(0L, 50_000L, 300_000L);
    assertThat(rs.get(0).promptTokens()).containsExactly(1, 2, 3, 4, 5);
    assertThat(rs.get(0).outputTokens()).isEqualTo(3);
    assertThat(rs.get(2).promptTokens()).containsExactly(10, 20, 30);
    assertThat(rs.get(2).outputTokens()).isEqualTo(4);
  }

  @Test
  void badTokenArrayTracesFailWithOneLineNamingTheirPlace() throws IOException {
    String head = "arrival_time,request_id,model,prefill_tokens,decode_tokens\n";
    String[][] cases = {
        {head + "0.1,r,m,\"[1,2,x]\",\"[3]\"\n", ":2:9: field 'prefill_tokens' = '[1,2,x]': expected a JSON array of token ids"},
        {head + "0.1,r,m,\"[1,2,-3]\",\"[3]\"\n", ":2:9: field 'prefill_tokens' = '[1,2,-3]': token 2 is not a token id"},
        {head + "0.1,r,m,\"[1,2.5]\",\"[3]\"\n", ":2:9: field 'prefill_tokens' = '[1,2.5]': token 1 is not a token id"},
        {head + "0.1,r,m,\"[]\",\"[3]\"\n", ":2:9: field 'prefill_tokens' = '[]': a prompt needs at least one token id"},
        {head + "0.1,r,m,\"[1]\",\"[]\"\n", ":2:15: field 'decode_tokens' = '[]': a request here generates at least one token"},
        {head + "-1,r,m,\"[1]\",\"[2]\"\n", ":2:1: field 'arrival_time' = '-1': expected a non-negative finite number"},
        {head + "0.1,r,m,\"[1]\"\n", ":2: expected 5 fields"},
        {"arrival,prefill\n", ":1:1: the header row is 'arrival,prefill', expected the columns"},
    };
    for (String[] c : cases) {
      Path f = write("bad.csv", c[0]);
      assertThatThrownBy(() -> TokenArrayTraceReader.open(f)).as(c[1])
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith(f + c[1]);
    }
  }
}
