package io.blis.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.api.AdmissionDecision;
import io.blis.api.AdmissionPolicy;
import io.blis.api.ClusterView;
import io.blis.api.InstanceSnapshot;
import io.blis.api.LatencyModel;
import io.blis.api.RequestView;
import io.blis.api.Router;
import io.blis.engine.policy.Routers;
import io.blis.engine.result.MetricsSummary;
import io.blis.engine.result.RequestRecord;
import io.blis.engine.result.SimulationResult;
import io.blis.engine.sched.Schedulers;
import io.blis.kvcache.KvBlockPool;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Go BLIS's own invariants (its docs/contributing/standards/invariants.md, INV-1 to INV-13) and the
 * invariant and golden-dataset tests of its repository (inference-sim/inference-sim at commit
 * f90a1e3a6787da17c2cd463dab6fb2660b1b1760), each re-expressed against this engine. The scenarios
 * and properties are Go BLIS's; the code is this project's. The table of which Go test maps to
 * which test here is docs/vllm-parity-e.md.
 *
 * <p>Go BLIS's golden dataset holds Go BLIS's own simulator outputs (a roofline step model), not
 * measurements; this engine is deliberately not identical (docs/go-blis.md), so the golden cases
 * are checked as properties: every request of the case completes, tokens and KV blocks are
 * conserved, causality holds, and the re-expressed workload has Go's token totals within a
 * sampling tolerance. Go's latency figures are printed beside this engine's, not asserted.
 */
class GoBlisInvariantParityTest {

  // ------------------------------------------------------------------ workloads

  /** A length drawn from a normal distribution, rounded and clamped to {@code [min, max]}. */
  static int normalLength(SplittableRandom rnd, int mean, int std, int min, int max) {
    if (min == max) {
      return min;
    }
    double v = mean + std * rnd.nextGaussian();
    return (int) Math.round(Math.max(min, Math.min(max, v)));
  }

  /**
   * Go BLIS's "distribution" workload shape: {@code n} requests at a constant rate, each a shared
   * prefix of {@code prefix} tokens followed by a normally distributed number of its own tokens,
   * with a normally distributed output length. Drawn with this project's seeded random numbers,
   * so the individual lengths are not Go's.
   */
  static List<RequestSpec> distribution(long seed, int n, double perSecond, int prefix, int pMean,
      int pStd, int pMin, int pMax, int oMean, int oStd, int oMin, int oMax) {
    SplittableRandom rnd = new SplittableRandom(seed);
    int[] shared = TestRequests.tokens(900_000_000, prefix);
    long gapUs = Math.round(1_000_000 / perSecond);
    List<RequestSpec> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      int own = normalLength(rnd, pMean, pStd, pMin, pMax);
      int output = normalLength(rnd, oMean, oStd, oMin, oMax);
      int[] prompt = TestRequests.concat(shared, TestRequests.tokens(10_000 * (i + 1), own));
      out.add(RequestSpec.simple(i, i * gapUs, prompt, output));
    }
    return out;
  }

  /** A request with an SLO class and an optional timeout (distinct token ids). */
  static RequestSpec spec(long id, long arrivalUs, int input, int output, String slo, long timeoutUs) {
    return new RequestSpec(id, arrivalUs, TestRequests.tokens(10_000 * ((int) id + 1), input), output,
        slo, "", "", 0, -1, 0, timeoutUs, 0);
  }

  /**
   * A seeded random single-cluster scenario without a CPU tier (so no step waits for a copy):
   * tight or ample KV, 1-3 instances, chunked prefill, priorities, timeouts, shared prefixes.
   */
  record Mix(long seed, List<RequestSpec> requests, EngineLimits limits, long kvBlocks,
      int blockSize, String scheduler, LinearTestModel model, int instances, long routingUs) {

    static Mix of(long seed, boolean oneInstance, boolean timeouts) {
      SplittableRandom rnd = new SplittableRandom(seed * 7919 + 17);
      int blockSize = new int[] {4, 8, 16}[rnd.nextInt(3)];
      EngineLimits limits = new EngineLimits(1 + rnd.nextInt(10), 24 + rnd.nextInt(300),
          rnd.nextInt(3) == 0 ? 8 + rnd.nextInt(40) : 0, 0, rnd.nextInt(4) != 0);
      long kv = rnd.nextBoolean() ? 16 + rnd.nextInt(40) : 4000;
      int[][] prefixes = {TestRequests.tokens(1_000_000, 8 + rnd.nextInt(64)),
          TestRequests.tokens(2_000_000, 8 + rnd.nextInt(64))};
      String[] slo = {"critical", "standard", "batch", "sheddable", "background"};
      List<RequestSpec> reqs = new ArrayList<>();
      long t = 0;
      int n = 25 + rnd.nextInt(50);
      for (int i = 0; i < n; i++) {
        t += rnd.nextInt(3) == 0 ? 0 : rnd.nextInt(2500);
        int[] own = TestRequests.tokens(10_000 * (i + 1), 1 + rnd.nextInt(90));
        int[] prompt = rnd.nextInt(3) == 0
            ? TestRequests.concat(prefixes[rnd.nextInt(2)], own) : own;
        long timeout = timeouts && rnd.nextInt(6) == 0 ? 1000 + rnd.nextInt(30_000) : 0;
        reqs.add(new RequestSpec(i, t, prompt, 1 + rnd.nextInt(50), slo[rnd.nextInt(slo.length)],
            "", "", 0, -1, 0, timeout, 0));
      }
      String sched = new String[] {"fcfs", "priority-fcfs", "sjf"}[rnd.nextInt(3)];
      LinearTestModel m = new LinearTestModel(40 + rnd.nextInt(400), rnd.nextInt(4),
          rnd.nextInt(80), rnd.nextInt(40), rnd.nextInt(15), rnd.nextInt(100));
      int instances = oneInstance || rnd.nextInt(3) != 0 ? 1 : 2 + rnd.nextInt(2);
      return new Mix(seed, reqs, limits, kv, blockSize, sched, m, instances,
          instances > 1 && rnd.nextBoolean() ? rnd.nextInt(2000) : 0);
    }

    Simulation.Builder builder() {
      return Simulation.builder().latencyModel(model).limits(limits).totalKvBlocks(kvBlocks)
          .blockSizeTokens(blockSize).instances(instances).routingLatencyUs(routingUs)
          .router(instances > 1 ? Routers.leastLoaded() : Routers.roundRobin())
          .scheduler(switch (scheduler) {
            case "priority-fcfs" -> Schedulers.priorityFcfs();
            case "sjf" -> Schedulers.shortestJobFirst();
            default -> Schedulers.fcfs();
          })
          .source(RequestSource.of(requests)).recordRequests(true);
    }
  }

  static Stream<Arguments> seeds() {
    return LongStream.rangeClosed(1, 40).mapToObj(Arguments::of);
  }

  // ------------------------------------------------------------------ journal of a run

  /**
   * Listens to a whole run and checks, as events happen: the engine clock never goes back (INV-3),
   * each request moves only along arrived, queued, running (preempted, queued, running)*, finished
   * (INV-2), and an instance steps again at once while work remains, or as soon as work arrives
   * (INV-8).
   */
  static final class Journal implements EngineListener {

    enum State { ARRIVED, QUEUED, RUNNING, PREEMPTED, FINISHED }

    static final class Life {
      State state;
      long arrivedUs = -1;
      long firstQueuedUs = -1;
      long firstScheduledUs = -1;
      long firstTokenUs = -1;
      long firstTokenClientUs = -1;
      long lastTokenClientUs = -1;
      long lastTokenUs = -1;
      long engineEndUs = -1;
      long clientEndUs = -1;
      int tokens;
      int preemptions;
      int instance = -1;
      RequestOutcome outcome;
    }

    final Map<Long, Life> lives = new HashMap<>();
    final List<String> violations = new ArrayList<>();
    final List<StepRecord> steps = new ArrayList<>();
    long lastEventUs = Long.MIN_VALUE;
    long events;
    // work conservation, per instance
    final Map<Integer, Set<Long>> live = new HashMap<>();
    final Map<Integer, Long> prevEnd = new HashMap<>();
    final Map<Integer, Boolean> busyAfterPrev = new HashMap<>();
    final Map<Integer, Long> wokenAt = new HashMap<>();
    long idleRestarts;
    long backToBackSteps;

    private void clock(long t, String what) {
      events++;
      if (t < lastEventUs) {
        violations.add("INV-3: " + what + " at " + t + " after an event at " + lastEventUs);
      }
      lastEventUs = Math.max(lastEventUs, t);
    }

    private Life life(RequestView r, String what) {
      Life l = lives.get(r.id());
      if (l == null) {
        violations.add("INV-2: " + what + " of request " + r.id() + " that never arrived");
        l = new Life();
        lives.put(r.id(), l);
      }
      if (l.state == State.FINISHED) {
        violations.add("INV-2: " + what + " of request " + r.id() + " after it finished");
      }
      return l;
    }

    private void expect(Life l, long id, String what, State... from) {
      if (!Arrays.asList(from).contains(l.state)) {
        violations.add("INV-2: request " + id + " " + what + " while " + l.state);
      }
    }

    @Override
    public void onArrived(RequestView r, long timeUs) {
      clock(timeUs, "arrival of " + r.id());
      if (lives.containsKey(r.id())) {
        violations.add("INV-2: request " + r.id() + " arrived twice");
      }
      Life l = new Life();
      l.state = State.ARRIVED;
      l.arrivedUs = timeUs;
      lives.put(r.id(), l);
    }

    @Override
    public void onQueued(int instance, RequestView r, long timeUs) {
      clock(timeUs, "queue entry of " + r.id());
      Life l = life(r, "queue entry");
      expect(l, r.id(), "queued", State.ARRIVED, State.PREEMPTED);
      l.state = State.QUEUED;
      if (l.firstQueuedUs < 0) {
        l.firstQueuedUs = timeUs;
        l.instance = instance;
      }
      Set<Long> here = live.computeIfAbsent(instance, k -> new HashSet<>());
      if (here.isEmpty() && !Boolean.TRUE.equals(busyAfterPrev.get(instance))
          && !wokenAt.containsKey(instance)) {
        wokenAt.put(instance, timeUs);
      }
      here.add(r.id());
    }

    @Override
    public void onScheduled(int instance, RequestView r, long stepId, boolean resume, long timeUs) {
      clock(timeUs, "scheduling of " + r.id());
      Life l = life(r, "scheduling");
      expect(l, r.id(), "scheduled", State.QUEUED);
      if (resume != (l.preemptions > 0)) {
        violations.add("INV-2: request " + r.id() + " resume flag " + resume + " after "
            + l.preemptions + " preemptions");
      }
      l.state = State.RUNNING;
      if (l.firstScheduledUs < 0) {
        l.firstScheduledUs = timeUs;
      }
    }

    @Override
    public void onFirstToken(int instance, RequestView r, long stepId, long timeUs, long clientUs) {
      clock(timeUs, "first token of " + r.id());
      Life l = life(r, "first token");
      expect(l, r.id(), "emitted its first token", State.RUNNING);
      if (l.firstTokenUs >= 0 || l.tokens != 0) {
        violations.add("INV-2: request " + r.id() + " had a second first token");
      }
      l.firstTokenUs = timeUs;
      l.firstTokenClientUs = clientUs;
    }

    @Override
    public void onToken(int instance, RequestView r, int index, long timeUs, long clientUs) {
      clock(timeUs, "token of " + r.id());
      Life l = life(r, "token");
      expect(l, r.id(), "emitted a token", State.RUNNING);
      if (index != l.tokens + 1) {
        violations.add("INV-2: request " + r.id() + " emitted token " + index + " after " + l.tokens);
      }
      if (l.firstTokenUs < 0) {
        violations.add("INV-5: request " + r.id() + " token before its first token");
      }
      if (clientUs < timeUs || clientUs < l.lastTokenClientUs || timeUs < l.lastTokenUs) {
        violations.add("INV-5: request " + r.id() + " token " + index + " seen at " + clientUs
            + " (engine " + timeUs + ") before the previous one at " + l.lastTokenClientUs);
      }
      l.tokens = index;
      l.lastTokenUs = timeUs;
      l.lastTokenClientUs = clientUs;
    }

    @Override
    public void onPreempted(int instance, RequestView r, long stepId, long timeUs) {
      clock(timeUs, "preemption of " + r.id());
      Life l = life(r, "preemption");
      expect(l, r.id(), "preempted", State.RUNNING);
      l.state = State.PREEMPTED;
      l.preemptions++;
    }

    @Override
    public void onFinished(int instance, RequestView r, RequestOutcome outcome, long engineEndUs,
        long clientEndUs) {
      clock(engineEndUs, "end of " + r.id());
      Life l = life(r, "end");
      if (outcome == RequestOutcome.COMPLETED) {
        expect(l, r.id(), "completed", State.RUNNING);
      }
      l.state = State.FINISHED;
      l.outcome = outcome;
      l.engineEndUs = engineEndUs;
      l.clientEndUs = clientEndUs;
      if (instance >= 0) {
        live.computeIfAbsent(instance, k -> new HashSet<>()).remove(r.id());
      }
    }

    @Override
    public void onStep(int instance, StepRecord step) {
      clock(step.endUs(), "end of step " + step.stepId() + " of instance " + instance);
      steps.add(step);
      if (step.durationUs() < 1) {
        violations.add("INV-3: step of " + step.durationUs() + " us at " + step.startUs());
      }
      Long end = prevEnd.get(instance);
      if (end != null && step.startUs() < end) {
        violations.add("INV-3: instance " + instance + " step at " + step.startUs()
            + " before the previous one ended at " + end);
      }
      if (Boolean.TRUE.equals(busyAfterPrev.get(instance))) {
        backToBackSteps++;
        if (step.startUs() != end) {
          violations.add("INV-8: instance " + instance + " idled from " + end + " to "
              + step.startUs() + " with requests waiting or running");
        }
      } else {
        idleRestarts++;
        Long woke = wokenAt.remove(instance);
        if (woke == null || step.startUs() != woke) {
          violations.add("INV-8: instance " + instance + " started a step at " + step.startUs()
              + " though work arrived at " + woke);
        }
      }
      prevEnd.put(instance, step.endUs());
      boolean busy = !live.getOrDefault(instance, Set.of()).isEmpty();
      busyAfterPrev.put(instance, busy);
    }

    /** After a run without horizon: nothing stranded on any instance. */
    void checkDrained() {
      live.forEach((i, ids) -> {
        if (!ids.isEmpty()) {
          violations.add("INV-8: instance " + i + " stranded requests " + ids);
        }
      });
      lives.forEach((id, l) -> {
        if (l.state != State.FINISHED) {
          violations.add("INV-1/INV-2: request " + id + " never finished (" + l.state + ")");
        }
      });
    }

    /** INV-5 on every finished request, against its record. */
    void checkCausality(SimulationResult res) {
      Map<Long, Long> firstStepStart = new HashMap<>();
      for (StepRecord st : steps) {
        for (StepRecord.RequestState q : st.requests()) {
          firstStepStart.merge(q.requestId(), st.startUs(), Math::min);
        }
      }
      for (RequestRecord rec : res.requests()) {
        Life l = lives.get(rec.id());
        if (l == null) {
          violations.add("INV-5: no journey for request " + rec.id());
          continue;
        }
        String id = "request " + rec.id();
        if (rec.arrivalUs() != l.arrivedUs) {
          violations.add("INV-5: " + id + " recorded arrival " + rec.arrivalUs() + " != " + l.arrivedUs);
        }
        if (l.firstQueuedUs >= 0 && l.firstQueuedUs < l.arrivedUs) {
          violations.add("INV-5: " + id + " queued before it arrived");
        }
        if (l.firstScheduledUs >= 0 && l.firstScheduledUs < l.firstQueuedUs) {
          violations.add("INV-5: " + id + " scheduled at " + l.firstScheduledUs + " before queued at "
              + l.firstQueuedUs);
        }
        if (l.engineEndUs < l.arrivedUs || (l.firstScheduledUs >= 0 && l.engineEndUs < l.firstScheduledUs)) {
          violations.add("INV-5: " + id + " ended at " + l.engineEndUs + " before it arrived or ran");
        }
        if (rec.outcome() == RequestOutcome.COMPLETED) {
          if (l.tokens != rec.outputTokens()) {
            violations.add("INV-2: " + id + " completed after " + l.tokens + " of "
                + rec.outputTokens() + " tokens");
          }
          if (!(l.firstScheduledUs <= l.firstTokenUs && l.firstTokenUs <= l.engineEndUs
              && l.firstTokenUs <= l.firstTokenClientUs)) {
            violations.add("INV-5: " + id + " scheduled " + l.firstScheduledUs + ", first token "
                + l.firstTokenUs + " (client " + l.firstTokenClientUs + "), end " + l.engineEndUs);
          }
          if (rec.ttftUs() != l.firstTokenClientUs - l.arrivedUs
              || rec.e2eUs() != l.lastTokenClientUs - l.arrivedUs
              || l.clientEndUs != l.lastTokenClientUs) {
            violations.add("INV-5: " + id + " TTFT/E2E " + rec.ttftUs() + "/" + rec.e2eUs()
                + " disagree with its tokens seen at " + l.firstTokenClientUs + "/" + l.lastTokenClientUs);
          }
          Long firstStep = firstStepStart.get(rec.id());
          if (firstStep == null || rec.schedulingDelayUs() != firstStep - l.arrivedUs
              || firstStep < l.firstScheduledUs) {
            violations.add("INV-5: " + id + " scheduling delay " + rec.schedulingDelayUs()
                + " but first in a step at " + firstStep + " (admitted " + l.firstScheduledUs
                + ", arrived " + l.arrivedUs + ")");
          }
          if (!(0 <= rec.schedulingDelayUs() && rec.schedulingDelayUs() <= rec.ttftUs()
              && rec.ttftUs() <= rec.e2eUs())) {
            violations.add("INV-5: " + id + " delay/TTFT/E2E out of order");
          }
        }
      }
    }
  }

  /** Runs {@code b} with a fresh journal attached; returns both. */
  record Journaled(SimulationResult result, Journal journal) {
    static Journaled of(Simulation.Builder b) {
      Journal j = new Journal();
      SimulationResult r = b.recordRequests(true).listener(j).build().run();
      return new Journaled(r, j);
    }
  }

  // ------------------------------------------------------------------ INV-1 request conservation

  /**
   * Go BLIS INV-1 request conservation, infinite horizon
   * (sim/simulator_test.go::TestSimulator_RequestConservation_InfiniteHorizon_AllRequestsComplete):
   * 50 requests of a seeded length distribution at 10 req/s all complete, nothing is left queued
   * or running, and the buckets add up to the injected count.
   */
  @Test
  void inv1AllRequestsCompleteWithoutHorizon() {
    List<RequestSpec> reqs = distribution(99, 50, 10, 0, 100, 20, 10, 200, 50, 10, 10, 100);
    SimulationResult r = Simulation.builder().latencyModel(new LinearTestModel(1000, 10, 100, 0, 100, 0))
        .totalKvBlocks(10_000).blockSizeTokens(16).limits(new EngineLimits(256, 2048, 0, 0))
        .source(RequestSource.of(reqs)).recordRequests(true).build().run();
    MetricsSummary o = r.overall();
    assertThat(o.injectedRequests()).isEqualTo(50);
    assertThat(o.completedRequests()).isEqualTo(50);
    assertThat(o.stillQueued()).isZero();
    assertThat(o.stillRunning()).isZero();
    assertConserved(o, 50);
  }

  /**
   * Go BLIS INV-1 with a finite horizon
   * (sim/simulator_test.go::TestSimulator_RequestConservation_FiniteHorizon_ThreeTermEquation): ten
   * small early requests and five large late ones, all arriving before a 0.5 s horizon; the run
   * stops with some completed and some still queued or running, and completed + queued + running
   * (+ rejected + timed out, both zero here) equals the injected 15. The result JSON carries
   * injected_requests, still_queued and still_running (sim/metrics_test.go::
   * TestSaveResults_ConservationFields).
   */
  @Test
  void inv1HoldsWhenTheHorizonCutsTheRunShort() {
    List<RequestSpec> reqs = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      reqs.add(TestRequests.req(i, i * 10_000L, 20, 5));
    }
    for (int i = 0; i < 5; i++) {
      reqs.add(TestRequests.req(10 + i, 300_000L + i * 40_000L, 200, 100));
    }
    SimulationResult r = Simulation.builder().latencyModel(new LinearTestModel(1000, 10, 0, 0, 0, 0))
        .totalKvBlocks(10_000).blockSizeTokens(16).limits(new EngineLimits(256, 2048, 0, 0))
        .horizonUs(500_000).source(RequestSource.of(reqs)).build().run();
    MetricsSummary o = r.overall();
    assertThat(o.injectedRequests()).isEqualTo(15);
    assertThat(o.completedRequests()).as("some complete").isPositive().isLessThan(15);
    assertThat(o.stillQueued() + o.stillRunning()).as("some are cut off").isPositive();
    assertThat(o.rejectedRequests() + o.timedOutRequests()).isZero();
    assertThat(o.completedRequests() + o.stillQueued() + o.stillRunning()).isEqualTo(15);
    // Go's TestSaveResults_ConservationFields: the result carries the conservation counts
    String json = r.toJson().replaceAll("\\s", "");
    assertThat(json).contains("\"injected_requests\":15")
        .contains("\"still_queued\":" + o.stillQueued())
        .contains("\"still_running\":" + o.stillRunning());
  }

  /**
   * Go BLIS INV-1, five buckets with timeouts and unservable requests
   * (sim/simulator_test.go::TestSimulator_Conservation_FiveTermWithTimeout): a 5-block cache of 16
   * tokens, one sequence at a time; three normal requests, three with a 3 ms deadline and two whose
   * 100-token prompt exceeds the 80-token cache. Every bucket is reached and they add up to 8.
   */
  @Test
  void inv1FiveBucketsWithTimeoutsAndUnservableRequests() {
    List<RequestSpec> reqs = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      reqs.add(TestRequests.req(i, i * 5000L, 10, 5));
      reqs.add(TestRequests.withTimeout(TestRequests.req(3 + i, i * 5000L, 10, 5), 3000));
    }
    for (int i = 0; i < 2; i++) {
      reqs.add(TestRequests.req(6 + i, i * 5000L, 100, 5));
    }
    reqs.sort(java.util.Comparator.comparingLong(RequestSpec::arrivalTimeUs));
    SimulationResult r = Simulation.builder().latencyModel(new LinearTestModel(1000, 10, 0, 0, 0, 0))
        .totalKvBlocks(5).blockSizeTokens(16).limits(new EngineLimits(1, 2048, 0, 0))
        .horizonUs(1_000_000).source(RequestSource.of(reqs)).build().run();
    MetricsSummary o = r.overall();
    assertThat(o.injectedRequests()).isEqualTo(8);
    assertThat(o.timedOutRequests()).isPositive();
    assertThat(o.completedRequests()).isPositive();
    assertThat(o.rejectedByReason()).containsEntry("exceeds_kv_cache_capacity", 2L);
    assertConserved(o, 8);
  }

  /**
   * Go BLIS INV-1 with max-model-len drops
   * (sim/simulator_test.go::TestSimulator_Conservation_WithMaxModelLen_Drops): max-model-len 200;
   * ten requests of 50 + 50 tokens fit, ten of 50 + 200 do not. Here a request's output count is
   * its declared budget, so the ten are refused as prompt + output exceeding the limit; ten
   * complete, ten are dropped, and they add up to 20.
   */
  @Test
  void inv1HoldsWhenMaxModelLenRefusesRequests() {
    List<RequestSpec> reqs = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      reqs.add(TestRequests.req(2 * i, i * 100_000L, 50, 50));
      reqs.add(TestRequests.req(2 * i + 1, i * 100_000L, 50, 200));
    }
    SimulationResult r = Simulation.builder().latencyModel(new LinearTestModel(1000, 1, 0, 0, 0, 0))
        .totalKvBlocks(1000).blockSizeTokens(16).limits(new EngineLimits(256, 2048, 0, 200))
        .horizonUs(10_000_000).source(RequestSource.of(reqs)).build().run();
    MetricsSummary o = r.overall();
    assertThat(o.completedRequests()).isEqualTo(10);
    assertThat(o.rejectedByReason()).containsEntry("prompt_plus_output_exceeds_max_model_len", 10L);
    assertThat(o.injectedRequests()).isEqualTo(20);
    assertConserved(o, 20);
  }

  /**
   * Go BLIS INV-1 at cluster level under shedding admission (sim/cluster/cluster_tier_test.go::
   * TestGAIELegacy_INV1_Conservation and ::TestTierShed_MonotonicSheddingOrder, sim/cluster/
   * cluster_test.go::TestClusterSimulator_OverloadConservation): 80 requests of each class at 10 us
   * apart on 2 instances, under tier-shed (threshold 0, minimum priority 3), gaie-legacy (queue
   * threshold 1, KV 0.8), token-bucket and reject-all. Every request is completed, rejected or timed
   * out, nothing is left over, the per-class counts add up, and shedding never takes a class of
   * higher priority more often than one below it (critical <= standard <= sheddable); the
   * shedding policies do shed, and only classes below the threshold.
   */
  @Test
  void inv1HoldsUnderSheddingAdmissionAndShedsLowerClassesFirst() {
    String[] classes = {"critical", "standard", "sheddable", "batch", "background"};
    List<RequestSpec> reqs = new ArrayList<>();
    for (int j = 0; j < 80; j++) {
      for (int c = 0; c < classes.length; c++) {
        reqs.add(spec(j * classes.length + c, j * 10L * classes.length + c * 10L, 100, 50, classes[c], 0));
      }
    }
    Map<String, AdmissionPolicy> policies = new java.util.LinkedHashMap<>();
    policies.put("tier-shed", io.blis.engine.policy.Admissions.tierShed(0, 3));
    policies.put("gaie-legacy", io.blis.engine.policy.Admissions.gaieLegacy(1, 0.8));
    policies.put("token-bucket", io.blis.engine.policy.Admissions.tokenBucket(2000, 50_000));
    policies.put("reject-all", io.blis.engine.policy.Admissions.rejectAll());
    for (Map.Entry<String, AdmissionPolicy> e : policies.entrySet()) {
      SimulationResult r = Simulation.builder().latencyModel(new LinearTestModel(1000, 10, 0, 0, 0, 0))
          .instances(2).router(Routers.leastLoaded()).admissionPolicy(e.getValue()).snapshotRefreshUs(0)
          .limits(new EngineLimits(8, 512, 0, 0)).totalKvBlocks(200).blockSizeTokens(16)
          .source(RequestSource.of(reqs)).recordRequests(true).build().run();
      MetricsSummary o = r.overall();
      String name = e.getKey();
      assertThat(o.injectedRequests()).as(name).isEqualTo(400);
      assertThat(o.completedRequests() + o.rejectedRequests() + o.timedOutRequests()).as(name).isEqualTo(400);
      assertThat(o.stillQueued() + o.stillRunning()).as(name).isZero();
      assertThat(o.rejectedByReason().values().stream().mapToLong(Long::longValue).sum()).as(name)
          .isEqualTo(o.rejectedRequests());
      Map<String, Long> rejected = new HashMap<>();
      for (RequestRecord rec : r.requests()) {
        if (rec.outcome() == RequestOutcome.REJECTED) {
          rejected.merge(rec.sloClass(), 1L, Long::sum);
        }
      }
      long crit = rejected.getOrDefault("critical", 0L);
      long std = rejected.getOrDefault("standard", 0L);
      long shed = rejected.getOrDefault("sheddable", 0L);
      assertThat(crit).as(name).isLessThanOrEqualTo(std);
      assertThat(std).as(name).isLessThanOrEqualTo(shed);
      switch (name) {
        case "tier-shed", "gaie-legacy" -> {
          assertThat(crit + std).as(name + " never sheds critical or standard").isZero();
          assertThat(shed).as(name + " sheds").isPositive();
        }
        case "reject-all" -> assertThat(o.rejectedRequests()).isEqualTo(400);
        default -> { }
      }
    }
  }

  // ------------------------------------------------------------------ INV-2, INV-3, INV-5, INV-8 journeys

  /**
   * Go BLIS INV-2 request lifecycle, INV-3 clock monotonicity, INV-5 causality and INV-8 work
   * conservation, checked event by event on seeded random workloads with preemption, timeouts,
   * chunked prefill and 1-3 instances (Go: sim/simulator_test.go::
   * TestSimulator_ClockMonotonicity_NeverDecreases, ::TestSimulator_Causality_FullChain_ArrivalToCompletion;
   * sim/cluster/cluster_test.go::TestClusterSimulator_Causality_PerInstance,
   * ::TestClusterSimulator_ClockMonotonicity_ClusterDominatesInstances,
   * ::TestClusterSimulator_SharedClock_MonotonicGlobal;
   * sim/cluster/instance_test.go::TestInstanceSimulator_ProcessNextEvent_ReturnsEventsWithMonotonicTimestamps).
   * Every listener event's engine time is at or after the previous one's, across all instances;
   * every request goes arrived, queued, running (preempted, queued, running)*, finished, and
   * completes only after exactly its output tokens, numbered 1, 2, ...; arrival <= queue entry <=
   * first scheduling <= first token <= end, client token times never go back, and the recorded
   * TTFT, E2E and scheduling delay are exactly those of the journey; an instance steps again the
   * moment a step ends while any request of it waits or runs, and starts the moment work arrives
   * when idle; nothing is stranded.
   */
  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  @Timeout(20)
  void inv2Inv3Inv5Inv8HoldEventByEvent(long seed) {
    Mix mix = Mix.of(seed, false, true);
    Journaled run = Journaled.of(mix.builder());
    Journal j = run.journal();
    j.checkDrained();
    j.checkCausality(run.result());
    assertThat(j.violations).as("seed %d", seed).isEmpty();
    assertThat(j.lives).hasSize(mix.requests().size());
    assertThat(j.events).isGreaterThan(mix.requests().size() * 3L);
  }

  /** The random mixes reach the paths the journey checks are about. */
  @Test
  void theRandomMixesReachPreemptionTimeoutsIdlingAndBackToBackSteps() {
    long preemptions = 0;
    long timeouts = 0;
    long idle = 0;
    long backToBack = 0;
    long clusters = 0;
    for (long seed = 1; seed <= 40; seed++) {
      Mix mix = Mix.of(seed, false, true);
      Journaled run = Journaled.of(mix.builder());
      preemptions += run.result().engine().preemptions();
      timeouts += run.result().overall().timedOutRequests();
      idle += run.journal().idleRestarts;
      backToBack += run.journal().backToBackSteps;
      clusters += mix.instances() > 1 ? 1 : 0;
    }
    assertThat(preemptions).isPositive();
    assertThat(timeouts).isPositive();
    assertThat(idle).isPositive();
    assertThat(backToBack).isPositive();
    assertThat(clusters).isPositive();
  }

  /**
   * Go BLIS INV-3 and INV-5 on the existing random scenarios of EngineInvariantTest (CPU tier,
   * stages, max-model-len refusals) and ClusterInvariantTest (admission and routing latency,
   * token-bucket admission, stale snapshots): clock monotonicity, lifecycle and causality hold
   * there too. Work conservation is not checked there, since a step may wait for a CPU-tier copy.
   */
  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  @Timeout(30)
  void inv2Inv3Inv5HoldOnTheExistingRandomScenarios(long seed) {
    for (Simulation.Builder b : List.of(EngineInvariantTest.Scenario.of(seed).builder(),
        ClusterInvariantTest.Scenario.of(seed).builder())) {
      Journaled run = Journaled.of(b);
      run.journal().checkCausality(run.result());
      List<String> v = run.journal().violations.stream().filter(s -> !s.startsWith("INV-8")).toList();
      assertThat(v).as("seed %d", seed).isEmpty();
    }
  }

  /**
   * Go BLIS INV-8 work-conserving (sim/simulator_test.go::TestWorkConserving_StepRestartsWhenWaitQNonEmpty):
   * one sequence at a time, two requests arriving at 0 and 1 us. The second must not be stranded
   * when the first completes: both complete, the first is scheduled at once, the second later
   * than the first but right when the first leaves the batch.
   */
  @Test
  void inv8TheSecondRequestIsNotStranded() {
    List<RequestSpec> reqs = List.of(TestRequests.req(0, 0, 10, 5), TestRequests.req(1, 1, 10, 5));
    Journaled run = Journaled.of(Simulation.builder().latencyModel(new LinearTestModel(1000, 10, 100, 0, 100, 0))
        .totalKvBlocks(10_000).blockSizeTokens(16).limits(new EngineLimits(1, 2048, 0, 0))
        .source(RequestSource.of(reqs)));
    run.journal().checkDrained();
    assertThat(run.journal().violations).isEmpty();
    assertThat(run.result().overall().completedRequests()).isEqualTo(2);
    List<RequestRecord> recs = run.result().requests().stream()
        .sorted(java.util.Comparator.comparingLong(RequestRecord::id)).toList();
    assertThat(recs.get(0).schedulingDelayUs()).isLessThan(10_000);
    assertThat(recs.get(1).schedulingDelayUs()).isGreaterThan(recs.get(0).schedulingDelayUs())
        .isLessThan(40_000);
    long firstDone = run.journal().lives.get(0L).engineEndUs;
    assertThat(run.journal().lives.get(1L).firstScheduledUs).isEqualTo(firstDone);
  }

  // ------------------------------------------------------------------ INV-4 KV conservation

  /**
   * Go BLIS INV-4 KV cache conservation, checked at every step
   * (sim/kv/cache_test.go::TestAllocateKVBlocks_BlockConservation_AfterAllocateReleaseCycles,
   * sim/kv/stress_test.go::TestStress_BlockConservationThroughCompleteLifecycle,
   * sim/batch_formation_test.go::TestPreemption_Priority_KVConservation): allocated + free = total,
   * and stronger than Go's count, every block's reference count equals the number of running
   * requests whose block table holds it (shared prefix blocks included), so no block is held by
   * nobody and none is shared unaccounted; after the run every block is free.
   */
  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  @Timeout(20)
  void inv4EveryAllocatedBlockBelongsToARunningRequest(long seed) {
    Mix mix = Mix.of(seed, false, true);
    Set<KvBlockPool> pools = Collections.newSetFromMap(new IdentityHashMap<>());
    List<String> violations = new ArrayList<>();
    long[] sharedSeen = {0};
    mix.builder().stepObserver((startUs, stepUs, batch, running, waiting, pool) -> {
      pools.add(pool);
      if (pool.usedBlocks() + pool.freeBlocks() != pool.totalBlocks()) {
        violations.add("used + free != total at " + startUs);
      }
      int[] holders = new int[pool.totalBlocks()];
      for (int i = 0; i < running.size(); i++) {
        EngineRequest r = running.get(i);
        for (int k = 0; k < r.table.numBlocks(); k++) {
          holders[r.table.blockId(k)]++;
        }
      }
      int referenced = 0;
      for (int b = 0; b < holders.length; b++) {
        if (pool.refCount(b) != holders[b]) {
          violations.add("block " + b + " ref count " + pool.refCount(b) + " but " + holders[b]
              + " running holders at " + startUs);
        }
        if (holders[b] > 1) {
          sharedSeen[0]++;
        }
        if (pool.refCount(b) > 0) {
          referenced++;
        }
      }
      if (referenced != pool.usedBlocks()) {
        violations.add(referenced + " referenced blocks but " + pool.usedBlocks() + " used at " + startUs);
      }
    }).build().run();
    assertThat(violations).as("seed %d", seed).isEmpty();
    assertThat(pools).isNotEmpty();
    for (KvBlockPool p : pools) {
      assertThat(p.usedBlocks()).as("blocks leaked, seed %d", seed).isZero();
      assertThat(p.freeBlocks()).isEqualTo(p.totalBlocks());
    }
  }

  /**
   * Go BLIS INV-4 zero leak after the run, single tier and with a CPU tier
   * (sim/simulator_test.go::TestSimulator_KVBlockConservation_PostSimulation_ZeroLeak): 20
   * requests of a seeded distribution complete, every GPU block is free again and the pool's size
   * is unchanged; the step records show blocks were really in use.
   */
  @Test
  void inv4NoBlockLeaksAfterTheRunWithOrWithoutACpuTier() {
    for (long cpuBlocks : new long[] {0, 20}) {
      List<RequestSpec> reqs = distribution(42, 20, 5, 0, 100, 20, 10, 200, 50, 10, 10, 100);
      Set<KvBlockPool> pools = Collections.newSetFromMap(new IdentityHashMap<>());
      RecordedRun run = RecordedRun.of(Simulation.builder()
          .latencyModel(new LinearTestModel(1000, 10, 100, 0, 100, 0)).totalKvBlocks(10_000)
          .blockSizeTokens(16).cpuKvTier(cpuBlocks, 1.0).source(RequestSource.of(reqs))
          .stepObserver((s, d, batch, running, waiting, pool) -> pools.add(pool)));
      assertThat(run.result().overall().completedRequests()).isEqualTo(20);
      assertThat(pools).hasSize(1);
      KvBlockPool pool = pools.iterator().next();
      assertThat(pool.usedBlocks()).as("cpu blocks %d", cpuBlocks).isZero();
      assertThat(pool.totalBlocks()).isEqualTo(10_000);
      assertThat(run.steps()).anySatisfy(s -> assertThat(s.kvBlocksFree()).isLessThan(s.kvBlocksTotal()));
      assertThat(run.steps()).allSatisfy(s -> assertThat(s.kvBlocksTotal()).isEqualTo(10_000));
    }
  }

  /**
   * Go BLIS INV-4 when a running request times out (sim/simulator_test.go::TestSimulator_Timeout_KVConservation):
   * a request of 50 + 100 tokens with 5 ms steps and a 20 ms deadline holds blocks while it runs,
   * times out mid-decode, and every block is free afterwards.
   */
  @Test
  void inv4ATimedOutRunningRequestFreesItsBlocks() {
    List<RequestSpec> reqs = List.of(TestRequests.withTimeout(TestRequests.req(0, 0, 50, 100), 20_000));
    Set<KvBlockPool> pools = Collections.newSetFromMap(new IdentityHashMap<>());
    RecordedRun run = RecordedRun.of(Simulation.builder().latencyModel(LinearTestModel.constant(5000))
        .totalKvBlocks(100).blockSizeTokens(16).source(RequestSource.of(reqs))
        .stepObserver((s, d, batch, running, waiting, pool) -> pools.add(pool)));
    assertThat(run.result().overall().timedOutRequests()).isEqualTo(1);
    assertThat(run.steps()).anySatisfy(s -> assertThat(s.kvBlocksFree()).isLessThan(100));
    KvBlockPool pool = pools.iterator().next();
    assertThat(pool.usedBlocks()).isZero();
    assertThat(pool.freeBlocks()).isEqualTo(pool.totalBlocks()).isEqualTo(100);
  }

  // ------------------------------------------------------------------ token conservation

  /**
   * Go BLIS output-token conservation (sim/simulator_test.go::TestTotalOutputTokens_Conservation,
   * ::TestTotalOutputTokens_Conservation_WithPreemption; sim/metrics_substrate_test.go::
   * TestMetrics_ChunkedPrefill_PreservesConservation): the output-token total is the sum of the
   * completed requests' output lengths, and the input total the sum of their prompts, also when a
   * 4-block cache forces preemption (recompute must not count a token twice) and when prefill is
   * chunked; the step records schedule exactly prompt + output - 1 tokens per request that was
   * never preempted.
   */
  @Test
  void outputAndInputTokenTotalsAreConservedUnderPreemptionAndChunking() {
    // two requests at once in a 64-token cache: preemption by recompute
    List<RequestSpec> tight = List.of(TestRequests.req(0, 0, 16, 5), TestRequests.req(1, 0, 32, 5));
    RecordedRun pre = RecordedRun.of(Simulation.builder().latencyModel(new LinearTestModel(1000, 1, 0, 0, 1, 0))
        .totalKvBlocks(4).blockSizeTokens(16).source(RequestSource.of(tight)));
    assertThat(pre.result().engine().preemptions()).as("precondition: preemption").isPositive();
    checkTokenTotals(pre, tight);
    // chunked prefill: long prompts in chunks of 64 within a 256-token budget
    List<RequestSpec> chunked = distribution(7, 30, 50, 0, 400, 150, 100, 900, 20, 10, 1, 60);
    RecordedRun ch = RecordedRun.of(Simulation.builder().latencyModel(new LinearTestModel(500, 2, 0, 0, 0, 0))
        .limits(new EngineLimits(16, 256, 64, 0)).totalKvBlocks(4000).blockSizeTokens(16)
        .source(RequestSource.of(chunked)));
    assertThat(ch.steps()).anySatisfy(s -> assertThat(s.requests()).anySatisfy(q -> {
      assertThat(q.prefill()).isTrue();
      assertThat(q.scheduledTokens()).isEqualTo(64).isLessThan(q.promptTokens() - q.computedTokens());
    }));
    checkTokenTotals(ch, chunked);
    Map<Long, Long> scheduled = new HashMap<>();
    for (StepRecord s : ch.steps()) {
      for (StepRecord.RequestState q : s.requests()) {
        scheduled.merge(q.requestId(), (long) q.scheduledTokens(), Long::sum);
        assertThat(q.scheduledTokens()).isLessThanOrEqualTo(q.prefill() ? 64 : 1);
      }
    }
    for (RequestRecord r : ch.result().requests()) {
      if (r.preemptions() == 0) {
        assertThat(scheduled.get(r.id()))
            .isEqualTo((long) r.inputTokens() - r.cachedPromptTokens() + r.outputTokens() - 1);
      }
    }
  }

  private static void checkTokenTotals(RecordedRun run, List<RequestSpec> reqs) {
    MetricsSummary o = run.result().overall();
    assertThat(o.completedRequests()).isEqualTo(reqs.size());
    long in = 0;
    long out = 0;
    for (RequestRecord r : run.result().requests()) {
      if (r.outcome() == RequestOutcome.COMPLETED) {
        in += r.inputTokens();
        out += r.outputTokens();
      }
    }
    assertThat(o.outputTokens()).isEqualTo(out)
        .isEqualTo(reqs.stream().mapToLong(RequestSpec::outputTokens).sum());
    assertThat(o.inputTokens()).isEqualTo(in)
        .isEqualTo(reqs.stream().mapToLong(q -> q.promptTokens().length).sum());
    assertThat(o.itl().count()).isEqualTo(out - reqs.size());
  }

  // ------------------------------------------------------------------ INV-12 phase-1 completeness

  /**
   * Go BLIS INV-12 Phase 1 completeness under priority preemption
   * (sim/batch_formation_test.go::TestPreemption_Priority_Phase1Completeness): when a preemption
   * victim sits before the request being scheduled, the requests after it must not be skipped.
   * Checked at every step of seeded single-instance runs with priority-fcfs and tight caches:
   * with budget left, a request that was running before the step and got no tokens is allowed
   * only when the running pass stopped because it preempted the request it was scheduling (a victim
   * of this step ranked after every scheduled request and before the skipped one); any other skip
   * is the index drift INV-12 forbids. The runs do evict requests ahead of a scheduled one.
   */
  @Test
  @Timeout(60)
  void inv12NoRunningRequestIsSkippedAfterANonTailEviction() {
    long nonTail = 0;
    List<String> violations = new ArrayList<>();
    for (long seed = 1; seed <= 60; seed++) {
      SplittableRandom rnd = new SplittableRandom(seed);
      List<RequestSpec> reqs = new ArrayList<>();
      String[] slo = {"critical", "standard", "batch", "sheddable", "background"};
      long t = 0;
      for (int i = 0; i < 40; i++) {
        t += rnd.nextInt(1500);
        reqs.add(spec(i, t, 4 + rnd.nextInt(40), 5 + rnd.nextInt(40), slo[rnd.nextInt(5)], 0));
      }
      EngineLimits limits = new EngineLimits(2 + rnd.nextInt(8), 64 + rnd.nextInt(200), 0, 0,
          rnd.nextBoolean());
      int budget = limits.maxNumBatchedTokens();
      Map<Long, Boolean> finished = new HashMap<>();
      List<Long> victims = new ArrayList<>();
      List<Long> before = new ArrayList<>();
      long[] evictedAhead = {0};
      long s = seed;
      Simulation.builder().latencyModel(new LinearTestModel(100, 1, 0, 0, 0, 0))
          .scheduler(Schedulers.priorityFcfs()).limits(limits).totalKvBlocks(12 + rnd.nextInt(20))
          .blockSizeTokens(4).source(RequestSource.of(reqs))
          .listener(new EngineListener() {
            @Override
            public void onPreempted(int instance, RequestView r, long stepId, long timeUs) {
              victims.add(r.id());
            }

            @Override
            public void onFinished(int instance, RequestView r, RequestOutcome o, long e, long c) {
              finished.put(r.id(), true);
            }
          })
          .stepObserver((startUs, stepUs, batch, running, waiting, pool) -> {
            List<Long> order = new ArrayList<>();
            for (long id : before) {
              if (!finished.containsKey(id)) {
                order.add(id);
              }
            }
            Map<Long, Integer> pos = new HashMap<>();
            for (int k = 0; k < order.size(); k++) {
              pos.put(order.get(k), k);
            }
            int lastScheduledOld = -1;
            List<Integer> skippedOld = new ArrayList<>();
            for (int k = 0; k < running.size(); k++) {
              EngineRequest r = running.get(k);
              Integer p = pos.get(r.id());
              if (p == null) {
                continue; // admitted in this step
              }
              if (r.newTokens > 0) {
                lastScheduledOld = Math.max(lastScheduledOld, p);
              } else {
                skippedOld.add(p);
              }
            }
            for (long v : victims) {
              Integer pv = pos.get(v);
              if (pv != null && pv < lastScheduledOld) {
                evictedAhead[0]++;
              }
            }
            if (batch.totalNewTokens() < budget) {
              for (int p : skippedOld) {
                boolean stoppedBySelfPreemption = false;
                for (long v : victims) {
                  Integer pv = pos.get(v);
                  if (pv != null && pv > lastScheduledOld && pv < p) {
                    stoppedBySelfPreemption = true;
                  }
                }
                if (!stoppedBySelfPreemption) {
                  violations.add("seed " + s + ": request " + order.get(p) + " skipped at " + startUs
                      + " with " + (budget - batch.totalNewTokens()) + " tokens of budget left");
                }
              }
            }
            victims.clear();
            before.clear();
            for (int k = 0; k < running.size(); k++) {
              before.add(running.get(k).id());
            }
          }).build().run();
      nonTail += evictedAhead[0];
    }
    assertThat(violations).isEmpty();
    assertThat(nonTail).as("victims evicted ahead of a scheduled request").isPositive();
  }

  // ------------------------------------------------------------------ INV-7 signal freshness

  /**
   * Go BLIS INV-7 signal freshness hierarchy (its docs; verified there by experiments H3 and H29):
   * the router's in-flight count is synchronous (requests routed to an instance and not finished,
   * exactly, at every decision), while queue depth, batch size and KV use are read at periodic
   * refreshes: between two decisions that see the same refresh time they are identical, the
   * refresh time is never in the future, and with a 0 interval every decision sees the present.
   */
  @Test
  void inv7InFlightIsSynchronousAndInstanceSignalsArePeriodic() {
    for (long interval : new long[] {0, 5000}) {
      List<RequestSpec> reqs = distribution(3, 120, 400, 32, 60, 30, 4, 200, 30, 15, 1, 80);
      int instances = 3;
      int[] mine = new int[instances];
      List<String> violations = new ArrayList<>();
      Map<Integer, long[]> lastSeen = new HashMap<>();
      long[] decisions = {0};
      long[] staleDecisions = {0};
      Router inner = Routers.leastLoaded();
      Router spy = (request, cluster) -> {
        decisions[0]++;
        for (int i = 0; i < cluster.size(); i++) {
          InstanceSnapshot s = cluster.get(i);
          if (s.inFlight() != mine[i]) {
            violations.add("in-flight " + s.inFlight() + " != " + mine[i] + " at " + cluster.nowUs());
          }
          if (s.refreshedAtUs() > cluster.nowUs()) {
            violations.add("refresh in the future at " + cluster.nowUs());
          }
          if (interval == 0 && s.refreshedAtUs() != cluster.nowUs()) {
            violations.add("oracle mode saw a refresh of " + s.refreshedAtUs() + " at " + cluster.nowUs());
          }
          if (s.refreshedAtUs() < cluster.nowUs()) {
            staleDecisions[0]++;
          }
          long[] cur = {s.refreshedAtUs(), s.queueDepth(), s.runningBatchSize(),
              Double.doubleToLongBits(s.kvUtilization())};
          long[] prev = lastSeen.put(i, cur);
          if (prev != null && prev[0] == cur[0] && !Arrays.equals(prev, cur)) {
            violations.add("instance " + i + " figures changed without a refresh at " + cluster.nowUs());
          }
        }
        int chosen = inner.route(request, cluster);
        mine[chosen]++;
        return chosen;
      };
      SimulationResult r = Simulation.builder().latencyModel(new LinearTestModel(2000, 5, 0, 0, 0, 0))
          .instances(instances).router(spy).snapshotRefreshUs(interval).totalKvBlocks(400)
          .blockSizeTokens(16).source(RequestSource.of(reqs)).recordRequests(true)
          .listener(new EngineListener() {
            @Override
            public void onFinished(int instance, RequestView q, RequestOutcome o, long e, long c) {
              if (instance >= 0) {
                mine[instance]--;
              }
            }
          }).build().run();
      assertThat(violations).as("interval %d", interval).isEmpty();
      assertThat(decisions[0]).isEqualTo(reqs.size());
      assertThat(r.overall().completedRequests()).isEqualTo(reqs.size());
      assertThat(mine).containsOnly(0);
      if (interval > 0) {
        assertThat(staleDecisions[0]).as("snapshots really were stale").isPositive();
      }
    }
  }

  // ------------------------------------------------------------------ INV-9 oracle boundary

  /**
   * Go BLIS INV-9 oracle knowledge boundary (sim/simulator_test.go::
   * TestINV9_OracleKnowledgeBoundary_NoOutputTokensInControlPlane, a source scan, and
   * ::TestEnqueueRequest_MaxOutputLen_OracleKnowledgeBoundary; sim/cluster/cluster_tenant_test.go::
   * TestTenantAdmission_INV9_DoesNotReadOutputTokens): the view a router, admission policy,
   * priority policy or scheduler gets of a request has no accessor for its output length (only
   * the tokens generated so far), and two workloads that differ only in output lengths show an
   * admission policy identical views (it is called at arrival, before anything ran differently).
   */
  @Test
  void inv9PoliciesCannotSeeTheOutputLength() {
    for (Method m : RequestView.class.getMethods()) {
      String n = m.getName().toLowerCase();
      assertThat(n.contains("output") || n.contains("maxtokens") || n.contains("remaining"))
          .as("RequestView.%s", m.getName()).isFalse();
    }
    List<List<String>> seen = new ArrayList<>();
    for (int variant = 0; variant < 2; variant++) {
      List<RequestSpec> reqs = new ArrayList<>();
      for (int i = 0; i < 12; i++) {
        reqs.add(spec(i, 0, 20 + i, variant == 0 ? 5 : 300 + 7 * i, i % 2 == 0 ? "critical" : "batch", 0));
      }
      List<String> views = new ArrayList<>();
      AdmissionPolicy spy = new AdmissionPolicy() {
        @Override
        public AdmissionDecision admit(RequestView r, ClusterView cluster) {
          views.add(r.id() + "/" + r.arrivalTimeUs() + "/" + r.inputTokens() + "/" + r.progressIndex()
              + "/" + r.newTokens() + "/" + r.generatedTokens() + "/" + r.phase() + "/" + r.priority()
              + "/" + r.sloClass() + "/" + r.tenant() + "/" + r.preemptions() + "/"
              + Arrays.toString(r.promptBlockHashes(16)));
          return AdmissionDecision.ADMIT;
        }
      };
      Simulation.builder().latencyModel(LinearTestModel.constant(1000)).instances(2)
          .admissionPolicy(spy).source(RequestSource.of(reqs)).build().run();
      seen.add(views);
    }
    assertThat(seen.get(0)).hasSize(12).isEqualTo(seen.get(1));
  }

  // ------------------------------------------------------------------ INV-10, INV-11 sessions

  /** A closed-loop source: sessions of several rounds, the next sent a think time after the last ends. */
  static final class Sessions implements RequestSource {
    final int rounds;
    final long thinkUs;
    final List<RequestSpec> first = new ArrayList<>();
    final Map<Long, String> terminal = new HashMap<>();
    final Map<Long, Long> sentAt = new HashMap<>();
    final List<String> violations = new ArrayList<>();
    final Map<Long, Long> doneAt = new HashMap<>();
    final Map<Long, Long> sessionOf = new HashMap<>();
    long nextId;
    int cursor;
    final SplittableRandom rnd;

    Sessions(long seed, int sessions, int rounds, long thinkUs) {
      this.rounds = rounds;
      this.thinkUs = thinkUs;
      this.rnd = new SplittableRandom(seed);
      for (int s = 0; s < sessions; s++) {
        first.add(turn(s, s * 3000L, 0));
      }
    }

    private RequestSpec turn(long session, long at, int round) {
      long id = nextId++;
      long timeout = rnd.nextInt(8) == 0 ? 2000 + rnd.nextInt(10_000) : 0;
      RequestSpec r = new RequestSpec(id, at, TestRequests.tokens(10_000 * ((int) id + 1), 10 + rnd.nextInt(60)),
          2 + rnd.nextInt(20), "standard", "", "", 0, session, round, timeout, 0);
      sentAt.put(id, at);
      sessionOf.put(id, session);
      return r;
    }

    @Override
    public RequestSpec next() {
      return cursor < first.size() ? first.get(cursor++) : null;
    }

    @Override
    public List<RequestSpec> onFinished(RequestSpec r, RequestOutcome outcome, long timeUs) {
      if (doneAt.put(r.id(), timeUs) != null) {
        violations.add("request " + r.id() + " finished twice");
      }
      long session = r.sessionId();
      if (terminal.containsKey(session)) {
        violations.add("session " + session + " ended twice");
      }
      if (outcome != RequestOutcome.COMPLETED) {
        terminal.put(session, "cancelled");
        return List.of();
      }
      if (r.round() + 1 == rounds) {
        terminal.put(session, "completed");
        return List.of();
      }
      return List.of(turn(session, timeUs + thinkUs, r.round() + 1));
    }
  }

  /**
   * Go BLIS INV-10 session causality and INV-11 session completeness (sim/cluster/cluster_test.go::
   * TestClusterSimulator_SessionFollowUpCausality, sim/workload/session_test.go, whose session
   * manager is a workload component): with a closed-loop source of 30 sessions of 4 rounds, a 5 ms
   * think time and some rounds timing out, on 2 instances, every next round arrives exactly the
   * think time after the client saw the previous round end (arrival + E2E), every request the
   * source handed out is simulated and ends once, and every session ends exactly once, completed
   * or cancelled.
   */
  @Test
  void inv10Inv11SessionRoundsFollowTheirPredecessorAndEverySessionEnds() {
    Sessions src = new Sessions(11, 30, 4, 5000);
    SimulationResult res = Simulation.builder().latencyModel(new LinearTestModel(800, 3, 50, 10, 20, 0))
        .instances(2).router(Routers.leastLoaded()).limits(new EngineLimits(4, 256, 0, 0))
        .totalKvBlocks(64).blockSizeTokens(16).source(src).recordRequests(true).build().run();
    assertThat(src.violations).isEmpty();
    Map<Long, RequestRecord> byId = new HashMap<>();
    res.requests().forEach(r -> byId.put(r.id(), r));
    assertThat(byId.keySet()).isEqualTo(src.sentAt.keySet());
    assertThat(res.overall().injectedRequests()).isEqualTo(src.nextId);
    List<RequestRecord> ordered = new ArrayList<>(res.requests());
    ordered.sort(java.util.Comparator.comparingLong(RequestRecord::id));
    for (RequestRecord r : ordered) {
      assertThat(r.arrivalUs()).isEqualTo(src.sentAt.get(r.id()));
      assertThat(src.doneAt.get(r.id())).as("client end of %d", r.id()).isEqualTo(r.arrivalUs() + r.e2eUs());
    }
    // the round after each completed, non-final round arrives think time after it ended
    long followUps = 0;
    Map<Long, List<RequestRecord>> bySession = new HashMap<>();
    for (RequestRecord r : ordered) {
      long session = src.sessionOf.get(r.id());
      bySession.computeIfAbsent(session, k -> new ArrayList<>()).add(r);
    }
    for (List<RequestRecord> rounds : bySession.values()) {
      for (int k = 1; k < rounds.size(); k++) {
        RequestRecord prev = rounds.get(k - 1);
        RequestRecord cur = rounds.get(k);
        assertThat(prev.outcome()).isEqualTo(RequestOutcome.COMPLETED);
        assertThat(cur.arrivalUs()).isEqualTo(prev.arrivalUs() + prev.e2eUs() + 5000)
            .isGreaterThanOrEqualTo(prev.arrivalUs() + prev.e2eUs());
        followUps++;
      }
    }
    assertThat(followUps).isPositive();
    assertThat(src.terminal).hasSize(30);
    assertThat(src.terminal.values()).contains("completed", "cancelled");
  }

  // ------------------------------------------------------------------ golden dataset

  /** A test case of Go BLIS's testdata/goldendataset.json: its configuration and Go's counts. */
  record GoldenCase(String model, int n, int prefix, int pMean, int pStd, int pMin, int pMax,
      int oMean, int oStd, int oMin, int oMax, int maxNumSeqs, int maxBatched, int maxModelLen,
      long kvBlocks, int blockSize, double[] alpha, double[] beta, long goCompleted,
      long goInputTokens, long goOutputTokens, double goDurationS, double goE2eMeanMs,
      double goTtftMeanMs) {}

  /** The five cases, all at 10 req/s, seed 42, 256 sequences, 2048 tokens, 4096 context, 16-token blocks. */
  static Stream<Arguments> goldenCases() {
    return Stream.of(
        new GoldenCase("meta-llama/llama-3.1-8b-instruct (chat)", 300, 284, 70, 35, 2, 200, 215, 80, 1, 512,
            256, 2048, 4096, 7463, 16, new double[] {232.46191091038054, 1.752360364195244, 3357.4400353290152},
            new double[] {5752.705191348184, 17.25086436834028, 5.999143920128404},
            300, 106250, 65040, 30.877336, 1491.0742633333334, 9.41624),
        new GoldenCase("meta-llama/llama-3.1-8b-instruct (long prompts)", 300, 0, 2048, 1974, 2, 3500, 28, 60, 6, 200,
            256, 2048, 4096, 7463, 16, new double[] {232.46191091038054, 1.752360364195244, 3357.4400353290152},
            new double[] {5752.705191348184, 17.25086436834028, 5.999143920128404},
            300, 545758, 12841, 30.325765, 408.64216, 49.407650000000004),
        new GoldenCase("qwen/qwen2.5-7b-instruct", 500, 284, 70, 35, 2, 200, 215, 80, 1, 512,
            256, 2048, 4096, 1281766, 16, new double[] {6748.565706303843, 1.60068623289796, 1952.6809484593186},
            new double[] {2206.931356893263, 16.799213648645086, 218.0953180138298},
            500, 177729, 107404, 50.208749, 609.7568279999999, 10.513494000000001),
        new GoldenCase("ibm-granite/granite-3.1-8b-instruct", 300, 0, 2048, 1974, 2, 3500, 28, 60, 6, 200,
            256, 2048, 4096, 105497, 16, new double[] {10024.457261493666, 2.110235670377125, 5822.543580863752},
            new double[] {2395.9072629127068, 11.768985404449758, 8.894510818868516},
            300, 545758, 12841, 30.125102, 366.4080466666667, 40.55762),
        new GoldenCase("codellama/codellama-34b-instruct-hf", 500, 284, 70, 35, 2, 200, 215, 80, 1, 512,
            256, 2048, 4096, 2537, 16, new double[] {13450.510995636703, 0.041813767451373045, 0},
            new double[] {26595.2781995357, 96.28441960829817, 56.58626882402723},
            500, 177729, 107404, 51.129613, 769.065764, 18.684356))
        .map(Arguments::of);
  }

  /**
   * This project's blackbox formula with a golden case's coefficients: a step costs beta0 + beta1
   * per prefill token + beta2 per decoding request; queueing alpha0 + alpha1 per prompt token; each
   * output token alpha2 more for the client. Go's golden values came from its roofline model
   * instead, which is why latencies are not compared.
   */
  /** This project's blackbox latency model with the given alpha and beta vectors. */
  static LatencyModel coefficientModel(double[] alpha, double[] beta) {
    return io.blis.latency.LatencyModels.create("blackbox",
        io.blis.latency.catalog.ModelCatalog.byName("meta-llama/Llama-3.1-8B-Instruct"),
        io.blis.latency.catalog.GpuCatalog.resolve("H100"), 1,
        io.blis.api.Coefficients.of("golden case", java.util.Map.of("alpha", alpha, "beta", beta)));
  }


  /**
   * Go BLIS golden dataset (sim/simulator_test.go::TestSimulator_GoldenDataset,
   * sim/cluster/instance_test.go::TestInstanceSimulator_GoldenDataset_Equivalence and
   * ::TestInstanceSimulator_GoldenDataset_Invariants, sim/cluster/cluster_test.go::
   * TestClusterSimulator_SingleInstance_GoldenEquivalence and ::..._GoldenInvariants): each case's
   * configuration and workload shape, re-expressed. Checked as properties: every request completes
   * (Go's completed_requests, all of them), none is refused or left over, the input and output
   * totals are the sums over the requests, every KV block is accounted for at every step and free
   * at the end, TTFT <= E2E for every request, the inter-token samples number output - 1 per
   * request, and the run lasts at least until the last arrival. The random draws are this
   * project's, so the token totals are compared with Go's within four standard errors (a check that
   * the workload is the same distribution, not of the engine); Go's latencies are printed, not
   * asserted.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("goldenCases")
  @Timeout(120)
  void goldenDatasetCasesHoldAsProperties(GoldenCase c) {
    List<RequestSpec> reqs = distribution(42, c.n(), 10, c.prefix(), c.pMean(), c.pStd(), c.pMin(),
        c.pMax(), c.oMean(), c.oStd(), c.oMin(), c.oMax());
    Set<KvBlockPool> pools = Collections.newSetFromMap(new IdentityHashMap<>());
    List<String> violations = new ArrayList<>();
    Journaled run = Journaled.of(Simulation.builder().latencyModel(coefficientModel(c.alpha(), c.beta()))
        .limits(new EngineLimits(c.maxNumSeqs(), c.maxBatched(), 0, c.maxModelLen()))
        .totalKvBlocks(c.kvBlocks()).blockSizeTokens(c.blockSize()).source(RequestSource.of(reqs))
        .stepObserver((s, d, batch, running, waiting, pool) -> {
          pools.add(pool);
          if (pool.usedBlocks() + pool.freeBlocks() != pool.totalBlocks()) {
            violations.add("KV not conserved at " + s);
          }
        }));
    SimulationResult r = run.result();
    MetricsSummary o = r.overall();
    long in = reqs.stream().mapToLong(q -> q.promptTokens().length).sum();
    long out = reqs.stream().mapToLong(RequestSpec::outputTokens).sum();
    System.out.printf("golden %s: completed %d (Go %d), input %d (Go %d), output %d (Go %d),"
            + " duration %.3f s (Go %.3f), E2E mean %.1f ms (Go %.1f), TTFT mean %.2f ms (Go %.2f),"
            + " preemptions %d%n", c.model(), o.completedRequests(), c.goCompleted(), o.inputTokens(),
        c.goInputTokens(), o.outputTokens(), c.goOutputTokens(), o.durationUs() / 1e6, c.goDurationS(),
        o.e2e().meanUs() / 1000, c.goE2eMeanMs(), o.ttft().meanUs() / 1000, c.goTtftMeanMs(),
        r.engine().preemptions());
    assertThat(violations).isEmpty();
    assertThat(o.injectedRequests()).isEqualTo(c.n());
    assertThat(o.completedRequests()).isEqualTo(c.goCompleted()).isEqualTo(c.n());
    assertThat(o.rejectedRequests() + o.timedOutRequests() + o.stillQueued() + o.stillRunning()).isZero();
    assertThat(o.inputTokens()).isEqualTo(in);
    assertThat(o.outputTokens()).isEqualTo(out);
    // Go's totals are another draw of the same distribution: within four standard errors of a
    // difference of two totals of n independent lengths
    assertThat((double) Math.abs(in - c.goInputTokens()))
        .isLessThanOrEqualTo(4 * stdev(reqs.stream().mapToDouble(q -> q.promptTokens().length).toArray())
            * Math.sqrt(2.0 * c.n()));
    assertThat((double) Math.abs(out - c.goOutputTokens()))
        .isLessThanOrEqualTo(4 * stdev(reqs.stream().mapToDouble(RequestSpec::outputTokens).toArray())
            * Math.sqrt(2.0 * c.n()));
    assertThat(o.itl().count()).isEqualTo(out - c.n());
    for (KvBlockPool p : pools) {
      assertThat(p.usedBlocks()).isZero();
    }
    long lastArrival = reqs.get(reqs.size() - 1).arrivalTimeUs();
    long lastEnd = r.requests().stream().mapToLong(q -> q.arrivalUs() + q.e2eUs()).max().orElseThrow();
    assertThat(lastEnd).isGreaterThan(lastArrival);
    run.journal().checkDrained();
    run.journal().checkCausality(r);
    assertThat(run.journal().violations).isEmpty();
  }

  private static double stdev(double[] xs) {
    double mean = Arrays.stream(xs).average().orElse(0);
    double ss = Arrays.stream(xs).map(x -> (x - mean) * (x - mean)).sum();
    return Math.sqrt(ss / Math.max(1, xs.length - 1));
  }

  /**
   * An experiment of Go BLIS's testdata/roofline_goldendataset.json (and, where its configuration
   * differs, of testdata/trained_physics_iter29.json): limits, KV and CPU blocks, the
   * inference-perf shared-prefix workload, and Go's expected counts and mean latencies.
   */
  record ExperimentCase(String id, int maxNumSeqs, int maxBatched, long kvBlocks, long cpuBlocks,
      int systemPrompts, int usersPerPrompt, int systemPromptLen, int questionLen, int outputLen,
      String stages, long goCompleted, long goInputTokens, long goOutputTokens, double goTtftMeanMs,
      double goE2eMeanMs) {
    @Override
    public String toString() {
      return id;
    }
  }

  /** Every roofline experiment, and the three trained-physics ones whose configuration differs. */
  static Stream<Arguments> experimentCases() {
    return Stream.of(
        new ExperimentCase("roofline 17", 128, 2048, 8253, 0, 9, 5, 100, 447, 248, "2.5@600;6.0@600", 5100, 2789700, 1264800, 32.476, 1013.100),
        new ExperimentCase("roofline 20", 128, 2048, 8253, 0, 11, 4, 100, 466, 247, "5.0@600;10.0@600", 9000, 5094000, 2223000, 54.377, 1313.780),
        new ExperimentCase("roofline 20260217-155451", 128, 2048, 7463, 1023, 11, 4, 100, 466, 247, "5.0@600;10.0@600", 9000, 5094000, 2223000, 188.459, 2086.254),
        new ExperimentCase("roofline 20260217-162547", 128, 2048, 7463, 1023, 10, 5, 150, 600, 251, "6.0@1200", 7200, 5400000, 1807200, 272.243, 2707.444),
        new ExperimentCase("roofline 20260217-231439", 128, 2048, 7463, 1023, 9, 5, 100, 447, 248, "8.0@600;20.0@600", 16800, 9189600, 4166400, 210.807, 2319.289),
        new ExperimentCase("roofline 21", 128, 2048, 8253, 0, 10, 5, 150, 600, 251, "6.0@1200", 7200, 5400000, 1807200, 89.021, 1603.242),
        new ExperimentCase("roofline 48", 128, 2048, 8253, 0, 23, 1, 100, 934, 1448, "1.0@1200", 1200, 1240800, 1737600, 12.168, 2959.118),
        new ExperimentCase("roofline 60", 128, 8192, 30425, 6553, 9, 5, 100, 447, 248, "2.5@600;6.0@600", 5100, 2789700, 1264800, 509.340, 2766.421),
        new ExperimentCase("roofline 61", 128, 2048, 30425, 6553, 11, 4, 100, 466, 247, "5.0@600;10.0@600", 9000, 5094000, 2223000, 573.716, 3123.744),
        new ExperimentCase("roofline 62", 128, 1024, 48009, 6553, 9, 5, 100, 447, 248, "2.5@600;6.0@600", 5100, 2789700, 1264800, 87.953, 916.726),
        new ExperimentCase("roofline 63", 128, 2048, 19251, 3276, 11, 4, 100, 466, 247, "5.0@600;10.0@600", 9000, 5094000, 2223000, 334.486, 2281.998),
        new ExperimentCase("roofline 64", 128, 2048, 65368, 9361, 10, 5, 150, 600, 251, "6.0@1200", 7200, 5400000, 1807200, 204.302, 1181.363),
        new ExperimentCase("roofline 65", 128, 2048, 20793, 4369, 9, 5, 100, 447, 248, "2.5@600;6.0@600", 5100, 2789700, 1264800, 400.372, 2787.578),
        new ExperimentCase("roofline 66", 128, 1024, 65368, 9361, 23, 1, 100, 934, 1448, "1.0@1200", 1200, 1240800, 1737600, 26.145, 4268.168),
        new ExperimentCase("roofline 67", 128, 2048, 7463, 1023, 23, 1, 100, 934, 1448, "1.0@1200", 1200, 1240800, 1737600, 25.940, 6547.380),
        new ExperimentCase("trained-physics 48", 128, 2048, 8253, 5461, 23, 1, 100, 934, 1448, "1.0@1200", 1200, 1240800, 1737600, 56.573, 38388.252),
        new ExperimentCase("trained-physics 60", 128, 8192, 30251, 6553, 9, 5, 100, 447, 248, "2.5@600;6.0@600", 5100, 2789700, 1264800, 47.419, 4375.513),
        new ExperimentCase("trained-physics 64", 128, 2048, 65352, 9362, 10, 5, 150, 600, 251, "6.0@1200", 7200, 5400000, 1807200, 27.801, 1720.109))
        .map(Arguments::of);
  }

  /**
   * Go BLIS golden datasets of whole experiments (sim/cluster/roofline_golden_test.go::
   * TestRoofline_GoldenDataset, sim/cluster/trained_physics_golden_test.go::
   * TestTrainedPhysics_GoldenDataset): each experiment's limits, KV and CPU-tier blocks and
   * inference-perf shared-prefix workload (exact lengths, seed 42; multi-turn chat off, see below)
   * on one instance, with a fixed
   * linear step model in place of Go's roofline or trained-physics model. As Go's tests require:
   * every request completes, none is queued, running, refused or timed out at the end, and TTFT
   * mean is positive and at most the E2E mean. The counts are deterministic here, so Go's
   * completed_requests, total_input_tokens and total_output_tokens are asserted exactly. KV blocks
   * are conserved at every step and all free at the end; lifecycle, clock and causality hold per
   * request. Go's latency figures come from its latency models and are printed, not asserted.
   *
   * <p>The experiments ask for {@code enable_multi_turn_chat: true}. Here that grows each user's
   * prompt by the previous round and response (inference-perf's behaviour, docs/workloads.md);
   * Go BLIS's expansion does not (its total_input_tokens is exactly requests x (system prompt +
   * question)). The workload is therefore run single-turn, which is what Go's counts describe.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("experimentCases")
  @Timeout(300)
  void goldenExperimentsCompleteWithGoCounts(ExperimentCase c) {
    List<io.blis.workload.inferenceperf.InferencePerfBlock.Stage> stages = new ArrayList<>();
    for (String st : c.stages().split(";")) {
      String[] rd = st.split("@");
      stages.add(new io.blis.workload.inferenceperf.InferencePerfBlock.Stage(
          Double.parseDouble(rd[0]), Double.parseDouble(rd[1])));
    }
    io.blis.workload.inferenceperf.InferencePerfProfile profile =
        new io.blis.workload.inferenceperf.InferencePerfBlock(stages,
            new io.blis.workload.inferenceperf.InferencePerfBlock.SharedPrefix(c.systemPrompts(),
                c.usersPerPrompt(), c.systemPromptLen(), c.questionLen(), c.outputLen(), false))
            .toProfile();
    RequestSource source = io.blis.workload.inferenceperf.InferencePerfWorkload.synthetic(profile, 42,
        io.blis.workload.inferenceperf.PromptLengthModel.EXACT);
    Set<KvBlockPool> pools = Collections.newSetFromMap(new IdentityHashMap<>());
    List<String> violations = new ArrayList<>();
    Simulation.Builder b = Simulation.builder().latencyModel(new LinearTestModel(6000, 30, 0, 0, 0, 0))
        .limits(new EngineLimits(c.maxNumSeqs(), c.maxBatched(), 0, 0)).totalKvBlocks(c.kvBlocks())
        .blockSizeTokens(16).source(source)
        .stepObserver((s, d, batch, running, waiting, pool) -> {
          pools.add(pool);
          if (pool.usedBlocks() + pool.freeBlocks() != pool.totalBlocks()) {
            violations.add("KV not conserved at " + s);
          }
        });
    if (c.cpuBlocks() > 0) {
      b.cpuKvTier(c.cpuBlocks(), 1.0);
    }
    Journaled run = Journaled.of(b);
    SimulationResult r = run.result();
    MetricsSummary o = r.overall();
    System.out.printf("experiment %s: completed %d (Go %d), input %d (Go %d), output %d (Go %d),"
            + " TTFT mean %.1f ms (Go %.1f), E2E mean %.1f ms (Go %.1f), preemptions %d%n", c.id(),
        o.completedRequests(), c.goCompleted(), o.inputTokens(), c.goInputTokens(), o.outputTokens(),
        c.goOutputTokens(), o.ttft().meanUs() / 1000, c.goTtftMeanMs(), o.e2e().meanUs() / 1000,
        c.goE2eMeanMs(), r.engine().preemptions());
    assertThat(violations).isEmpty();
    assertThat(o.injectedRequests()).isEqualTo(c.goCompleted());
    assertThat(o.completedRequests()).isEqualTo(c.goCompleted());
    assertThat(o.stillQueued() + o.stillRunning() + o.rejectedRequests() + o.timedOutRequests()).isZero();
    assertThat(o.inputTokens()).isEqualTo(c.goInputTokens());
    assertThat(o.outputTokens()).isEqualTo(c.goOutputTokens());
    assertThat(o.ttft().meanUs()).isPositive().isLessThanOrEqualTo(o.e2e().meanUs());
    for (KvBlockPool p : pools) {
      assertThat(p.usedBlocks()).isZero();
    }
    run.journal().checkDrained();
    run.journal().checkCausality(r);
    List<String> v = run.journal().violations.stream()
        .filter(x -> c.cpuBlocks() == 0 || !x.startsWith("INV-8")).toList();
    assertThat(v).isEmpty();
  }

  // ------------------------------------------------------------------ INV-PD disaggregation

  /**
   * Go BLIS INV-PD-1 KV completeness, INV-PD-2 pool exclusivity, INV-PD-3 transfer conservation,
   * INV-PD-4 phase causality, INV-PD-5 pool stability and INV-PD-6 parent granularity
   * (sim/cluster/disaggregation_test.go::TestDisaggregation_RequestCompletesFullPath,
   * ::TestDisaggregation_PrefillRoutedToPrefillPool, ::TestDisaggregation_DecodeRoutedToDecodePool,
   * ::TestDisaggregation_TransferConservation, ::TestDisaggregation_INV1Conservation,
   * ::TestDisaggregation_PhaseCausality, ::TestDisaggregation_PoolStability,
   * ::TestDisaggregation_MetricProjection_NoSubRequestKeys): 300 seeded requests on 2 prefill and
   * 3 decode instances, every one split. Each request is queued and prefilled only on prefill
   * instances, then queued, decoded and ended only on decode instances; arrival <= prefill queue
   * entry <= prefill scheduling <= end of its last prefill step <= decode queue entry <= decode
   * scheduling <= first token <= end; the gaps between prefill end and decode queue entry add up
   * to at least the transfers' total time; every started transfer completed; the pools are the
   * configured ones, each instance with its own pool's KV size (INV-P2-1); and each request has
   * exactly one record, on its decode instance, with TTFT <= E2E (pd_e2e_causality_test.go's INV-5).
   */
  @Test
  void pdPhasesAreOrderedConfinedToTheirPoolsAndConserved() {
    List<RequestSpec> reqs = randomRequests(5, 300, 3000, 32, 600, 1, 40);
    io.blis.engine.disagg.Disaggregation pd = alwaysSplit(Routers.leastLoaded());
    LinearTestModel m = new LinearTestModel(800, 8, 0, 0, 0, 0);
    Map<Long, List<long[]>> log = new HashMap<>(); // kind, instance, time
    Map<Long, Long> prefillEnd = new HashMap<>();
    Map<Integer, Long> kvTotals = new HashMap<>();
    List<String> violations = new ArrayList<>();
    long[] last = {Long.MIN_VALUE};
    EngineListener l = new EngineListener() {
      void add(long id, int kind, int instance, long time) {
        if (time < last[0]) {
          violations.add("INV-3: event at " + time + " after " + last[0]);
        }
        last[0] = Math.max(last[0], time);
        log.computeIfAbsent(id, k -> new ArrayList<>()).add(new long[] {kind, instance, time});
      }

      @Override
      public void onArrived(RequestView r, long timeUs) {
        add(r.id(), 0, -1, timeUs);
      }

      @Override
      public void onQueued(int instance, RequestView r, long timeUs) {
        add(r.id(), 1, instance, timeUs);
      }

      @Override
      public void onScheduled(int instance, RequestView r, long stepId, boolean resume, long timeUs) {
        add(r.id(), 2, instance, timeUs);
      }

      @Override
      public void onFirstToken(int instance, RequestView r, long stepId, long timeUs, long clientUs) {
        add(r.id(), 3, instance, timeUs);
      }

      @Override
      public void onFinished(int instance, RequestView r, RequestOutcome o, long engineEndUs, long c) {
        add(r.id(), 4, instance, engineEndUs);
      }

      @Override
      public void onStep(int instance, StepRecord step) {
        kvTotals.put(instance, step.kvBlocksTotal());
        last[0] = Math.max(last[0], step.endUs());
        for (StepRecord.RequestState q : step.requests()) {
          if (q.prefill() && instance < 2) {
            prefillEnd.merge(q.requestId(), step.endUs(), Math::max);
          }
        }
      }
    };
    SimulationResult r = Simulation.builder().source(RequestSource.of(reqs)).recordRequests(true)
        .addPool(InstancePool.of("p", 2, i -> m, EngineLimits.defaults(), 600, 16))
        .addPool(InstancePool.of("d", 3, i -> m, EngineLimits.defaults(), 400, 16))
        .disaggregation(pd).listener(l).build().run();
    Map<Integer, String> poolOf = new HashMap<>();
    r.cluster().instances().forEach(i -> poolOf.put(i.index(), i.pool()));
    assertThat(poolOf).as("INV-PD-5").containsEntry(0, "p").containsEntry(1, "p")
        .containsEntry(2, "d").containsEntry(3, "d").containsEntry(4, "d").hasSize(5);
    assertThat(kvTotals).as("INV-P2-1: each pool's own KV size").hasSize(5)
        .containsEntry(0, 600L).containsEntry(1, 600L)
        .containsEntry(2, 400L).containsEntry(3, 400L).containsEntry(4, 400L);
    io.blis.engine.result.DisaggregationReport d = r.disaggregation().orElseThrow();
    assertThat(r.overall().completedRequests()).isEqualTo(300);
    assertThat(d.disaggregated()).isEqualTo(300);
    assertThat(d.transferred()).as("INV-PD-3").isEqualTo(d.disaggregated());
    assertThat(d.pendingAtEnd()).isZero();
    assertThat(r.requests()).hasSize(300);
    assertThat(r.requests().stream().map(RequestRecord::id).distinct().count()).as("INV-PD-6").isEqualTo(300);
    long gapSum = 0;
    for (RequestRecord rec : r.requests()) {
      List<long[]> ev = log.get(rec.id());
      assertThat(poolOf.get(rec.instance())).as("INV-PD-6 record on its decode instance").isEqualTo("d");
      // kinds in order: arrived, queued(p), scheduled(p), queued(d), scheduled(d), first token(d), finished(d)
      List<Long> kinds = ev.stream().map(e -> e[0]).toList();
      assertThat(kinds).as("request %d", rec.id()).containsExactly(0L, 1L, 2L, 1L, 2L, 3L, 4L);
      assertThat(poolOf.get((int) ev.get(1)[1])).as("INV-PD-2 prefill queue").isEqualTo("p");
      assertThat(poolOf.get((int) ev.get(2)[1])).as("INV-PD-2 prefill").isEqualTo("p");
      for (int k = 3; k < 7; k++) {
        assertThat(poolOf.get((int) ev.get(k)[1])).as("INV-PD-2 decode side").isEqualTo("d");
      }
      long end = prefillEnd.get(rec.id());
      long[] times = {ev.get(0)[2], ev.get(1)[2], ev.get(2)[2], end, ev.get(3)[2], ev.get(4)[2],
          ev.get(5)[2], ev.get(6)[2]};
      for (int k = 1; k < times.length; k++) {
        assertThat(times[k]).as("INV-PD-4 request %d phase %d", rec.id(), k).isGreaterThanOrEqualTo(times[k - 1]);
      }
      gapSum += ev.get(3)[2] - end;
      assertThat(rec.ttftUs()).as("INV-5 on the parent").isPositive().isLessThanOrEqualTo(rec.e2eUs());
    }
    assertThat(violations).isEmpty();
    assertThat((double) gapSum).as("INV-PD-1: decode entry waits for the transfer")
        .isGreaterThanOrEqualTo(d.transferUs().meanUs() * d.transferred() - 1e-6 * d.transferred());
    assertThat(d.transferUs().meanUs()).isPositive();
  }

  /**
   * Go BLIS INV-1 with disaggregation and a bounded horizon (sim/cluster/disaggregation_test.go::
   * TestDisaggregation_INV1Conservation_BoundedHorizon): 200 split requests, the run cut at 0.3 s
   * while requests are being prefilled, moved and decoded. Completed + still queued + still running
   * (+ rejected + timed out) equals the injected count, some are cut off, and no request has two
   * records.
   */
  @Test
  void pdConservationHoldsWhenTheHorizonCutsTheRunShort() {
    List<RequestSpec> reqs = randomRequests(9, 200, 2000, 64, 500, 5, 60);
    io.blis.engine.disagg.Disaggregation pd = alwaysSplit(Routers.roundRobin());
    LinearTestModel m = new LinearTestModel(800, 8, 0, 0, 0, 0);
    SimulationResult r = Simulation.builder().source(RequestSource.of(reqs)).recordRequests(true)
        .addPool(InstancePool.of("p", 1, i -> m, EngineLimits.defaults(), 300, 16))
        .addPool(InstancePool.of("d", 2, i -> m, EngineLimits.defaults(), 300, 16))
        .disaggregation(pd).horizonUs(300_000).build().run();
    MetricsSummary o = r.overall();
    assertThat(o.completedRequests()).isPositive();
    assertThat(o.stillQueued() + o.stillRunning()).as("cut off").isPositive();
    assertConserved(o, o.injectedRequests());
    assertThat(r.requests().stream().map(RequestRecord::id).distinct().count())
        .isEqualTo(r.requests().size());
  }

  // ------------------------------------------------------------------ metric monotonicity

  /**
   * Go BLIS metric monotonicity (sim/metrics_substrate_test.go::
   * TestMetrics_SchedulingDelay_Monotonic_WithInputLength, ::TestMetrics_TTFT_Monotonic_NoCaching,
   * ::TestMetrics_TTFT_PartialMonotonicity_CacheMissFixed, ::TestMetrics_TTFT_NonMonotonic_WithPrefixCaching):
   * requests served one at a time (far apart), with queueing linear in prompt length: scheduling
   * delay and TTFT never decrease as the prompt grows when nothing is cached; with a 512-token
   * prefix cached by an earlier request, a 600-token prompt sharing it gets its first token sooner
   * than a 200-token prompt that shares nothing, so TTFT is not monotone in prompt length then,
   * while TTFT stays monotone in the number of uncached tokens.
   */
  @Test
  void ttftAndSchedulingDelayGrowWithUncachedPromptLength() {
    LatencyModel model = coefficientModel(new double[] {100, 2, 0}, new double[] {1000, 10, 5});
    List<RequestSpec> reqs = new ArrayList<>();
    int[] lengths = {16, 50, 120, 300, 700, 1500, 3000};
    for (int i = 0; i < lengths.length; i++) {
      reqs.add(TestRequests.req(i, i * 1_000_000L, lengths[i], 3));
    }
    SimulationResult r = Simulation.builder().latencyModel(model).totalKvBlocks(1000).blockSizeTokens(16)
        .source(RequestSource.of(reqs)).recordRequests(true).build().run();
    List<RequestRecord> recs = new ArrayList<>(r.requests());
    recs.sort(java.util.Comparator.comparingLong(RequestRecord::id));
    for (int i = 1; i < recs.size(); i++) {
      assertThat(recs.get(i).schedulingDelayUs()).isGreaterThanOrEqualTo(recs.get(i - 1).schedulingDelayUs());
      assertThat(recs.get(i).ttftUs()).isGreaterThan(recs.get(i - 1).ttftUs());
    }
    int[] prefix = TestRequests.tokens(500_000, 512);
    List<RequestSpec> cached = List.of(
        RequestSpec.simple(0, 0, TestRequests.concat(prefix, TestRequests.tokens(600_000, 40)), 2),
        RequestSpec.simple(1, 1_000_000, TestRequests.tokens(700_000, 200), 2),
        RequestSpec.simple(2, 2_000_000, TestRequests.concat(prefix, TestRequests.tokens(800_000, 88)), 2));
    SimulationResult c = Simulation.builder().latencyModel(coefficientModel(new double[] {100, 0, 0},
            new double[] {1000, 10, 5})).totalKvBlocks(1000).blockSizeTokens(16)
        .source(RequestSource.of(cached)).recordRequests(true).build().run();
    Map<Long, RequestRecord> byId = new HashMap<>();
    c.requests().forEach(q -> byId.put(q.id(), q));
    RequestRecord shortCold = byId.get(1L);
    RequestRecord longWarm = byId.get(2L);
    assertThat(longWarm.cachedPromptTokens()).isEqualTo(512);
    assertThat(longWarm.inputTokens()).isGreaterThan(shortCold.inputTokens());
    assertThat(longWarm.ttftUs()).as("non-monotone with caching").isLessThan(shortCold.ttftUs());
    assertThat(longWarm.inputTokens() - longWarm.cachedPromptTokens())
        .isLessThan(shortCold.inputTokens() - shortCold.cachedPromptTokens());
  }

  // ------------------------------------------------------------------ INV-6 determinism

  /**
   * Go BLIS INV-6 determinism (sim/simulator_test.go::TestSimulator_Determinism_ByteIdenticalJSON,
   * sim/cluster/cluster_test.go::TestClusterSimulator_Determinism_ByteIdenticalAggregation): the
   * same seeded mixes, with sessions' closed-loop follow-ups and a journal attached, give
   * byte-identical result JSON twice (EngineInvariantTest and ClusterInvariantTest check the same
   * on their scenarios).
   */
  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void inv6SameSeedSameBytes(long seed) {
    String a = Mix.of(seed, false, true).builder().listener(new Journal()).build().run().toJson();
    String b = Mix.of(seed, false, true).builder().build().run().toJson();
    assertThat(a).isEqualTo(b);
    String s1 = Simulation.builder().latencyModel(LinearTestModel.constant(700)).instances(2)
        .source(new Sessions(seed, 10, 3, 2000)).build().run().toJson();
    String s2 = Simulation.builder().latencyModel(LinearTestModel.constant(700)).instances(2)
        .source(new Sessions(seed, 10, 3, 2000)).build().run().toJson();
    assertThat(s1).isEqualTo(s2);
  }

  /** Go BLIS INV-1's five buckets: every injected request ends in exactly one. */
  private static void assertConserved(MetricsSummary o, long injected) {
    assertThat(o.completedRequests() + o.stillQueued() + o.stillRunning() + o.rejectedRequests()
        + o.timedOutRequests()).as("completed + queued + running + rejected + timed out").isEqualTo(injected);
  }

  /** {@code n} seeded requests, gaps below {@code maxGapUs}, lengths {@code min + [0, span)}. */
  private static List<RequestSpec> randomRequests(long seed, int n, int maxGapUs, int minIn, int spanIn,
      int minOut, int spanOut) {
    SplittableRandom rnd = new SplittableRandom(seed);
    List<RequestSpec> reqs = new ArrayList<>();
    long t = 0;
    for (int i = 0; i < n; i++) {
      t += rnd.nextInt(maxGapUs);
      reqs.add(TestRequests.req(i, t, minIn + rnd.nextInt(spanIn), minOut + rnd.nextInt(spanOut)));
    }
    return reqs;
  }

  /** Every request prefilled on pool "p" and decoded on pool "d" (one test GPU each). */
  private static io.blis.engine.disagg.Disaggregation alwaysSplit(io.blis.api.Router decodeRouter) {
    io.blis.engine.disagg.Disaggregation.PoolKv kv =
        new io.blis.engine.disagg.Disaggregation.PoolKv(1, 1000, 1000, "test-gpu", 8, 100e9, 10e9, 2, 10);
    return new io.blis.engine.disagg.Disaggregation(io.blis.engine.disagg.Decider.ALWAYS, 16,
        Map.of("p", io.blis.engine.disagg.Role.PREFILL, "d", io.blis.engine.disagg.Role.DECODE),
        Map.of("p", kv, "d", kv), io.blis.engine.disagg.Disaggregation.Transfer.links(),
        Routers.roundRobin(), decodeRouter);
  }
}
