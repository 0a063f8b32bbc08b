package io.blis.engine.trace;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.api.RequestView;
import io.blis.engine.EngineLimits;
import io.blis.engine.EngineListener;
import io.blis.engine.InstancePool;
import io.blis.engine.LinearTestModel;
import io.blis.engine.result.RequestRecord;
import io.blis.engine.Simulation;
import io.blis.engine.result.SimulationResult;
import io.blis.engine.StepRecord;
import io.blis.latency.fit.TraceImport;
import io.blis.latency.fit.TracedJourney;
import io.blis.latency.fit.TracedStep;
import io.blis.workload.RequestOutcome;
import io.blis.workload.synthetic.LengthSpec;
import io.blis.workload.synthetic.SyntheticWorkload;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/** What the exporter writes, the importer reads back exactly: the steps the engine ran. */
class TraceRoundTripTest {

  /** Records every step while forwarding everything to the writer. */
  private static final class Tee implements EngineListener {
    final OtlpTraceWriter writer;
    final List<Integer> instances = new ArrayList<>();
    final List<StepRecord> steps = new ArrayList<>();

    Tee(OtlpTraceWriter writer) {
      this.writer = writer;
    }

    @Override
    public void onArrived(RequestView r, long t) {
      writer.onArrived(r, t);
    }

    @Override
    public void onQueued(int i, RequestView r, long t) {
      writer.onQueued(i, r, t);
    }

    @Override
    public void onScheduled(int i, RequestView r, long step, boolean resume, long t) {
      writer.onScheduled(i, r, step, resume, t);
    }

    @Override
    public void onFirstToken(int i, RequestView r, long step, long t, long client) {
      writer.onFirstToken(i, r, step, t, client);
    }

    @Override
    public void onPreempted(int i, RequestView r, long step, long t) {
      writer.onPreempted(i, r, step, t);
    }

    @Override
    public void onFinished(int i, RequestView r, RequestOutcome o, long end, long client) {
      writer.onFinished(i, r, o, end, client);
    }

    @Override
    public void onStep(int i, StepRecord s) {
      instances.add(i);
      steps.add(s);
      writer.onStep(i, s);
    }
  }

  @ParameterizedTest(name = "step sample rate {0}")
  @ValueSource(doubles = {1.0, 0.1})
  void importedStepsAndJourneysAreExactlyWhatTheEngineDid(double rate, @TempDir Path dir) {
    Path file = dir.resolve("t.jsonl.gz");
    Tee tee;
    SimulationResult res;
    try (OtlpTraceWriter w = new OtlpTraceWriter(file, rate, true, 5)) {
      tee = new Tee(w);
      LinearTestModel m = new LinearTestModel(700, 2, 50, 10, 3, 20);
      res = Simulation.builder()
          .addPool(InstancePool.of("a", 2, i -> m, new EngineLimits(16, 512, 0, 0), 220, 16))
          .source(SyntheticWorkload.poissonGaussian(200, 400, new LengthSpec(300, 150, 8, 1200),
              new LengthSpec(50, 30, 1, 150), 32, 9))
          .listener(tee).recordRequests(true).build().run();
    }
    TraceImport.Result imported = TraceImport.read(file);
    assertThat(imported.warnings()).isEmpty();

    Map<String, StepRecord> byKey = new HashMap<>();
    for (int k = 0; k < tee.steps.size(); k++) {
      byKey.put(tee.instances.get(k) + "/" + tee.steps.get(k).stepId(), tee.steps.get(k));
    }
    if (rate == 1.0) {
      assertThat(imported.steps()).hasSize(tee.steps.size());
    } else {
      assertThat(imported.steps().size()).isBetween(1, tee.steps.size() / 5);
    }
    for (TracedStep t : imported.steps()) {
      StepRecord s = byKey.get(t.instance() + "/" + t.stepId());
      assertThat(s).as("step %s/%d exists", t.instance(), t.stepId()).isNotNull();
      assertThat(t).isEqualTo(new TracedStep(t.instance(), s.stepId(), s.startUs() * 1000,
          s.endUs() * 1000, s.durationUs(), s.prefillRequests(), s.decodeRequests(),
          s.prefillTokens(), s.decodeTokens(), s.runningDepth(), s.waitingDepth(),
          s.kvBlocksTotal(), s.kvBlocksFree(), s.finished(), s.preempted(),
          s.requests().stream().map(q -> new TracedStep.Request(Long.toString(q.requestId()),
              q.prefill(), q.promptTokens(), q.computedTokens(), q.outputTokens(), q.preemptions(),
              q.scheduledTokens(), q.blocksAllocated(), q.cachedBlocks())).toList()));
    }
    assertThat(res.engine().preemptions()).isPositive();

    assertThat(imported.journeys()).hasSize(400);
    Map<String, RequestRecord> records = new HashMap<>();
    res.requests().forEach(r -> records.put(Long.toString(r.id()), r));
    for (TracedJourney j : imported.journeys()) {
      RequestRecord r = records.get(j.requestId());
      assertThat(j.instance()).isEqualTo(Integer.toString(r.instance()));
      long arrivedNs = j.api().get(0).timeNs();
      assertThat(arrivedNs).isEqualTo(r.arrivalUs() * 1000);
      if (r.outcome() == RequestOutcome.COMPLETED) {
        TracedJourney.Event first = j.api().stream().filter(e -> e.name().equals("FIRST_RESPONSE"))
            .findFirst().orElseThrow();
        assertThat(first.timeNs() - arrivedNs).isEqualTo(r.ttftUs() * 1000);
        long preempted = j.core().stream().filter(e -> e.name().equals("PREEMPTED")).count();
        assertThat(preempted).isEqualTo(r.preemptions());
        assertThat(j.core().stream().filter(e -> e.name().equals("SCHEDULED")).count())
            .isEqualTo(preempted + 1);
      }
    }
  }
}
