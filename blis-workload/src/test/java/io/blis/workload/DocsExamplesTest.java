package io.blis.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.blis.workload.inferenceperf.InferencePerfProfile;
import io.blis.workload.inferenceperf.InferencePerfProfiles;
import io.blis.workload.inferenceperf.InferencePerfWorkload;
import io.blis.workload.spec.WorkloadSpec;
import io.blis.workload.trace.TraceReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The examples in docs/workloads.md parse and run. */
class DocsExamplesTest {

  private static List<String> blocks(String lang) throws Exception {
    Path dir = Path.of("").toAbsolutePath();
    Path doc = null;
    while (dir != null && doc == null) {
      Path candidate = dir.resolve("docs/workloads.md");
      doc = Files.exists(candidate) ? candidate : null;
      dir = dir.getParent();
    }
    assumeTrue(doc != null, "docs/workloads.md not found");
    List<String> out = new ArrayList<>();
    StringBuilder current = null;
    for (String line : Files.readAllLines(doc)) {
      if (current == null && line.equals("```" + lang)) {
        current = new StringBuilder();
      } else if (current != null && line.equals("```")) {
        out.add(current.toString());
        current = null;
      } else if (current != null) {
        current.append(line).append('\n');
      }
    }
    return out;
  }

  @Test
  void yamlExamplesParseAndGenerate() throws Exception {
    List<String> yaml = blocks("yaml");
    assertThat(yaml).hasSize(2);
    WorkloadSpec spec = WorkloadSpec.parse(yaml.get(0), "chat-and-batch.yaml");
    assertThat(TestSupport.drain(spec.source())).hasSize(4000);
    InferencePerfProfile p = InferencePerfProfiles.parse(yaml.get(1), "codegen.yaml");
    assertThat(p.totalRequests()).isEqualTo(9000);
    assertThat(TestSupport.drain(InferencePerfWorkload.synthetic(p, 42))).hasSize(3000);
    assertThatThrownBy(() -> InferencePerfProfiles.parse(
        yaml.get(1).replace("question_len", "question_length"), "codegen.yaml"))
        .hasMessageStartingWith("codegen.yaml:22:5: unknown key 'question_length' in data.shared_prefix");
  }

  @Test
  void traceExampleReads(@TempDir Path dir) throws Exception {
    List<String> text = blocks("text");
    assertThat(text).hasSize(1);
    Path f = dir.resolve("example.csv");
    Files.writeString(f, text.get(0));
    List<RequestSpec> rs = TestSupport.drain(TraceReader.open(f));
    assertThat(rs).hasSize(2);
    assertThat(rs.get(0).prefixGroup()).isEqualTo("sys-a");
    assertThat(rs.get(0).inputTokens()).isEqualTo(338);
    assertThat(rs.get(1).sloClass()).isEqualTo("batch");
  }
}
