package io.blis.engine.trace;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.engine.EngineLimits;
import io.blis.engine.LinearTestModel;
import io.blis.engine.Simulation;
import io.blis.engine.result.SimulationResult;
import io.blis.latency.fit.BatchReconstruction;
import io.blis.latency.fit.TraceImport;
import io.blis.latency.fit.TracedStep;
import io.blis.workload.synthetic.LengthSpec;
import io.blis.workload.synthetic.SyntheticWorkload;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The batches rebuilt from journeys and step summaries alone are the batches the simulator ran:
 * each equals the step's request snapshots (KV block counts aside, which are not rebuilt), with
 * chunked prefills, prefix-cache hits, preemptions and resumes; with half the journeys traced, the
 * steps rebuilt are still exactly right and the others are counted.
 */
class BatchReconstructionSimTest {

  private static TracedStep withoutRequests(TracedStep s) {
    return new TracedStep(s.instance(), s.stepId(), s.startNs(), s.endNs(), s.durationUs(),
        s.prefillRequests(), s.decodeRequests(), s.prefillTokens(), s.decodeTokens(),
        s.runningDepth(), s.waitingDepth(), s.kvBlocksTotal(), s.kvBlocksFree(), s.finished(),
        s.preempted(), List.of());
  }

  @ParameterizedTest(name = "step sample rate {0}, long-prefill threshold {1}, journeys {2}, {3} requests/s")
  @CsvSource({"1.0, 0, 1.0, 200", "0.1, 0, 1.0, 200", "0.3, 256, 1.0, 200", "1.0, 0, 0.5, 25"})
  void rebuiltBatchesEqualTheSnapshots(double rate, int threshold, double journeys,
      double requestRate, @TempDir Path dir) {
    Path file = dir.resolve("t.jsonl.gz");
    SimulationResult res;
    try (OtlpTraceWriter w = new OtlpTraceWriter(file, rate, journeys, true, 5)) {
      res = Simulation.builder().latencyModel(new LinearTestModel(700, 2, 50, 10, 3, 20))
          .limits(new EngineLimits(32, 512, threshold, 0)).totalKvBlocks(260)
          .source(SyntheticWorkload.poissonGaussian(requestRate, 600, new LengthSpec(400, 300, 8, 1500),
              new LengthSpec(60, 40, 1, 200), 64, 9))
          .listener(w).build().run();
    }
    if (requestRate > 100) {
      assertThat(res.engine().preemptions()).as("preemptions exercise RESUME").isPositive();
    }
    TraceImport.Result imported = TraceImport.read(file);
    Map<Long, TracedStep> truth = new HashMap<>();
    List<TracedStep> bare = new ArrayList<>();
    for (TracedStep s : imported.steps()) {
      truth.put(s.stepId(), s);
      bare.add(withoutRequests(s));
    }
    BatchReconstruction.Result r = BatchReconstruction.reconstruct(bare, imported.journeys());
    String summary = r.steps().size() + " of " + bare.size() + " rebuilt, left out " + r.leftOut();
    long leftOut = r.leftOut().values().stream().mapToLong(Long::longValue).sum();
    assertThat(r.steps().size() + leftOut).isEqualTo(bare.size());
    if (journeys == 1.0) {
      // only steps with two prefill chunks that nothing else pins down are left out
      assertThat(r.leftOut().keySet()).as(summary).containsOnly("prefill_chunks_undetermined");
      assertThat(r.steps().size()).as(summary).isGreaterThan((int) (0.9 * bare.size()));
    } else {
      assertThat(r.leftOut().get("untraced_requests")).as(summary).isPositive();
      assertThat(r.steps()).as(summary).isNotEmpty();
    }
    for (TracedStep s : r.steps()) {
      List<TracedStep.Request> expected = truth.get(s.stepId()).requests().stream()
          .map(q -> new TracedStep.Request(q.requestId(), q.prefill(), q.promptTokens(),
              q.computedTokens(), q.outputTokens(), q.preemptions(), q.scheduledTokens(), -1, -1))
          .sorted(Comparator.comparing(TracedStep.Request::requestId)).toList();
      List<TracedStep.Request> got = s.requests().stream()
          .sorted(Comparator.comparing(TracedStep.Request::requestId)).toList();
      assertThat(got).as("step %d", s.stepId()).isEqualTo(expected);
    }
  }
}
