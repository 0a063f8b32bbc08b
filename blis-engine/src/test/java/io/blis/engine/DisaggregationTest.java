package io.blis.engine;

import static io.blis.engine.TestRequests.req;
import static io.blis.engine.TestRequests.withTimeout;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.blis.engine.disagg.Decider;
import io.blis.engine.disagg.Disaggregation;
import io.blis.engine.disagg.Role;
import io.blis.engine.policy.Routers;
import io.blis.engine.result.DisaggregationReport;
import io.blis.engine.result.InstanceResult;
import io.blis.engine.result.RequestRecord;
import io.blis.engine.result.SimulationResult;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class DisaggregationTest {

  /** 1,000 bytes of KV per token on each of one GPU; 8 GPUs a node; NVLink 100 GB/s, NIC 10 GB/s. */
  private static final Disaggregation.PoolKv KV =
      new Disaggregation.PoolKv(1, 1000, 1000, "test-gpu", 8, 100e9, 10e9, 2, 10);

  private static Disaggregation pd(Decider decider, Disaggregation.Transfer transfer) {
    return new Disaggregation(decider, 16, Map.of("p", Role.PREFILL, "d", Role.DECODE),
        Map.of("p", KV, "d", KV), transfer, Routers.roundRobin(), Routers.roundRobin());
  }

  private static SimulationResult run(Disaggregation d, List<RequestSpec> reqs, InstancePool... pools) {
    Simulation.Builder b = Simulation.builder().source(RequestSource.of(reqs)).recordRequests(true);
    for (InstancePool p : pools) {
      b.addPool(p);
    }
    if (d != null) {
      b.disaggregation(d);
    } else {
      b.router(Routers.roundRobin());
    }
    return b.build().run();
  }

  private static InstancePool linear(String name, int instances, long kvBlocks) {
    LinearTestModel m = new LinearTestModel(1000, 10, 0, 0, 0, 0);
    return InstancePool.of(name, instances, i -> m, EngineLimits.defaults(), kvBlocks, 16);
  }

  @Test
  void oneRequestByHand() {
    // prefill: 1,000 + 10 x 161 = 2,610 us; 160 tokens' KV (all but the last prompt token) at a
    // fixed 1 GB/s: 160,000 bytes in 160 us, plus 50 us: arrives at 2,820; the decode instance
    // computes the last prompt token (1,010 us): first token at 3,830; three more at 1,010 each
    SimulationResult r = run(pd(Decider.ALWAYS, new Disaggregation.Transfer(1.0, 50, false)),
        List.of(req(1, 0, 161, 4)), linear("p", 1, 1000), linear("d", 1, 1000));
    RequestRecord rec = r.requests().get(0);
    assertEquals(RequestOutcome.COMPLETED, rec.outcome());
    assertEquals(3_830, rec.ttftUs());
    assertEquals(3_830 + 3 * 1_010, rec.e2eUs());
    assertEquals(1, rec.instance(), "it ends on the decode instance");
    DisaggregationReport d = r.disaggregation().orElseThrow();
    assertEquals(1, d.disaggregated());
    assertEquals(1, d.transferred());
    assertEquals(0, d.keptWhole());
    assertEquals(210, d.transferUs().meanUs());
    assertEquals(2_610, d.prefillUs().meanUs());
    assertEquals(0, d.prefillQueueUs().meanUs());
    assertEquals(0, d.decodeWaitUs().meanUs());
    assertEquals(1_010, d.firstDecodeUs().meanUs());
    assertEquals(0.00016, d.transferredGb(), 1e-12);
    // the prefill instance did one step, the decode instance four
    assertEquals(1, r.cluster().instances().get(0).steps());
    assertEquals(4, r.cluster().instances().get(1).steps());
    assertEquals(0, r.cluster().instances().get(0).metrics().injectedRequests(),
        "a disaggregated request counts at its decode instance");

    // kept whole on the decode instance: 2,610 to the first token, then 3 x 1,010
    SimulationResult whole = run(pd(Decider.NEVER, Disaggregation.Transfer.links()),
        List.of(req(1, 0, 161, 4)), linear("p", 1, 1000), linear("d", 1, 1000));
    assertEquals(2_610, whole.requests().get(0).ttftUs());
    assertEquals(2_610 + 3 * 1_010, whole.requests().get(0).e2eUs());
    assertEquals(1, whole.disaggregation().orElseThrow().keptWhole());
    assertEquals(0, whole.cluster().instances().get(0).steps(), "the prefill instance idles");
  }

  @Test
  void linksByNodeAndPrefixCachedOnDecode() {
    // one prefill and one decode instance of one GPU each share a node: NVLink, 100 GB/s and 2 us.
    // 160 tokens' KV: 160,000 bytes in 1.6 us (2 us rounded up), + 2 + 50 us = 54 us
    SimulationResult r = run(pd(Decider.ALWAYS, Disaggregation.Transfer.links()),
        List.of(req(1, 0, 161, 2)), linear("p", 1, 1000), linear("d", 1, 1000));
    assertEquals(54, r.disaggregation().orElseThrow().transferUs().meanUs());
    // the whole time to first token is the client's, its phases' sum
    assertEquals(r.requests().get(0).ttftUs(), r.disaggregation().orElseThrow().ttftUs().meanUs());
    assertEquals(1, r.disaggregation().orElseThrow().ttftUs().count());
    // nine instances of one GPU on nodes of 8: the prefill instance (index 0) and the decode
    // instance of index 8 sit on different nodes: NIC, 10 GB/s and 10 us: 16 + 10 + 50 = 76 us
    Disaggregation far = new Disaggregation(Decider.ALWAYS, 16,
        Map.of("p", Role.PREFILL, "d", Role.DECODE), Map.of("p", KV, "d", KV),
        Disaggregation.Transfer.links(), Routers.roundRobin(), (req, view) -> view.size() - 1);
    SimulationResult r2 = run(far, List.of(req(1, 0, 161, 2)), linear("p", 1, 1000), linear("d", 8, 1000));
    assertEquals(8, r2.requests().get(0).instance());
    assertEquals(76, r2.disaggregation().orElseThrow().transferUs().meanUs());
  }

  @Test
  void sharedBandwidthSlowsConcurrentTransfers() {
    // two requests prefilled in the same step start moving together: at a shared 1 GB/s each
    // gets half, 320 us instead of 160 us (+ 50)
    List<RequestSpec> two = List.of(req(1, 0, 161, 2), req(2, 0, 161, 2));
    DisaggregationReport shared = run(pd(Decider.ALWAYS, new Disaggregation.Transfer(1.0, 50, true)), two,
        linear("p", 1, 1000), linear("d", 1, 1000)).disaggregation().orElseThrow();
    DisaggregationReport apart = run(pd(Decider.ALWAYS, new Disaggregation.Transfer(1.0, 50, false)), two,
        linear("p", 1, 1000), linear("d", 1, 1000)).disaggregation().orElseThrow();
    assertEquals(370, shared.transferUs().meanUs());
    assertEquals(2, shared.peakConcurrentTransfers());
    assertEquals(1.5, shared.meanConcurrentTransfers()); // the first starts alone, the second beside it
    assertEquals(210, apart.transferUs().meanUs());
  }

  @Test
  void prefixThresholdKeepsCachedPromptsWhole() {
    // request 2 repeats request 1's prompt: the decode instance caches 160 of its 161 tokens
    // after request 1's KV arrived there, so 1 uncached token is under the threshold of 16
    int[] prompt = TestRequests.tokens(0, 161);
    List<RequestSpec> reqs = List.of(RequestSpec.simple(1, 0, prompt, 2),
        RequestSpec.simple(2, 100_000, prompt, 2), req(3, 200_000, 161, 2));
    SimulationResult r = run(pd(Decider.PREFIX_THRESHOLD, Disaggregation.Transfer.links()), reqs,
        linear("p", 1, 1000), linear("d", 1, 1000));
    DisaggregationReport d = r.disaggregation().orElseThrow();
    assertEquals(2, d.disaggregated(), "requests 1 and 3");
    assertEquals(1, d.keptWhole(), "request 2");
    assertEquals(3, r.overall().completedRequests());
  }

  @Test
  void requestsWaitForDecodeRoomAndNoneIsLost() {
    // the decode instance holds 12 blocks: one request of 161 + 20 tokens (12 blocks) at a time;
    // the second waits for the first to finish, then moves
    List<RequestSpec> reqs = List.of(req(1, 0, 161, 20), req(2, 0, 161, 20), req(3, 0, 161, 20));
    SimulationResult r = run(pd(Decider.ALWAYS, Disaggregation.Transfer.links()), reqs,
        linear("p", 1, 1000), linear("d", 1, 12));
    DisaggregationReport d = r.disaggregation().orElseThrow();
    assertEquals(3, r.overall().completedRequests());
    assertEquals(3, d.transferred());
    assertEquals(2, d.waitedForDecode());
    assertTrue(d.decodeWaitUs().p99Us() > 0);
    assertEquals(60, r.overall().outputTokens());

    // with a client deadline, the one still waiting ends timed out and frees its prefill blocks
    List<RequestSpec> timed = new ArrayList<>();
    for (RequestSpec s : reqs) {
      timed.add(withTimeout(s, 20_000));
    }
    SimulationResult t = run(pd(Decider.ALWAYS, Disaggregation.Transfer.links()), timed,
        linear("p", 1, 1000), linear("d", 1, 12));
    assertEquals(3, t.overall().completedRequests() + t.overall().timedOutRequests());
    assertTrue(t.overall().timedOutRequests() >= 1);
    assertEquals(0, t.disaggregation().orElseThrow().pendingAtEnd());
  }

  @Test
  void anInstanceDoingBothDecodesWhatItPrefilledWithoutACopy() {
    // instances of 13 blocks doing both, both routers choosing instance 0: a request of 161 + 20
    // tokens needs 12 blocks; a copy of its prompt's 11 beside the prefilled ones would never fit
    // there, so it decodes in the blocks it has (and, queued first, is not stuck behind the next
    // request's wait for blocks)
    io.blis.api.Router first = (req, view) -> 0;
    io.blis.api.Router alsoFirst = (req, view) -> 0;
    Disaggregation shared = new Disaggregation(Decider.ALWAYS, 16, Map.of("s", Role.BOTH), Map.of("s", KV),
        Disaggregation.Transfer.links(), first, alsoFirst);
    List<RequestSpec> reqs = List.of(req(1, 0, 161, 20), req(2, 0, 161, 20), req(3, 0, 161, 20));
    SimulationResult r = Simulation.builder().source(RequestSource.of(reqs)).addPool(linear("s", 2, 13))
        .disaggregation(shared).recordRequests(true).build().run();
    assertTrue(r.requests().stream().allMatch(q -> q.instance() == 0));
    DisaggregationReport d = r.disaggregation().orElseThrow();
    assertEquals(3, r.overall().completedRequests());
    assertEquals(3, d.transferred());
    assertEquals(0, d.transferUs().p99Us());
    assertEquals(0, d.transferredGb());
    assertEquals(0, d.pendingAtEnd());
  }

  @Test
  void requestsTimedOutBetweenTheirInstancesFreeTheirBlocks() {
    // the decode instance takes one request at a time; the others' deadlines pass while they wait
    // for its room (holding their prefill blocks) or move: every block comes back, and a request
    // arriving after them is served by both instances
    List<RequestSpec> reqs = new ArrayList<>();
    for (int i = 1; i <= 4; i++) {
      reqs.add(withTimeout(req(i, 0, 161, 20), 12_000));
    }
    reqs.add(req(9, 200_000, 161, 20));
    SimulationResult r = run(pd(Decider.ALWAYS, Disaggregation.Transfer.links()), reqs,
        linear("p", 1, 48), linear("d", 1, 12));
    DisaggregationReport d = r.disaggregation().orElseThrow();
    assertTrue(d.waitedForDecode() >= 2, "requests waited for decode room: " + d.waitedForDecode());
    assertEquals(5, r.overall().completedRequests() + r.overall().timedOutRequests());
    assertEquals(RequestOutcome.COMPLETED, r.requests().get(4).outcome());
    assertEquals(0, d.pendingAtEnd());
  }

  @Test
  void conservationUnderLoad() {
    SplittableRandom rnd = new SplittableRandom(7);
    List<RequestSpec> reqs = new ArrayList<>();
    long t = 0;
    long outputs = 0;
    for (int i = 1; i <= 400; i++) {
      t += rnd.nextInt(4_000);
      int out = 1 + rnd.nextInt(60);
      outputs += out;
      reqs.add(req(i, t, 50 + rnd.nextInt(1_500), out));
    }
    SimulationResult r = run(pd(Decider.PREFIX_THRESHOLD, Disaggregation.Transfer.links()), reqs,
        linear("p", 2, 400), linear("d", 3, 300));
    assertEquals(400, r.overall().completedRequests());
    assertEquals(outputs, r.overall().outputTokens());
    DisaggregationReport d = r.disaggregation().orElseThrow();
    assertEquals(400, d.disaggregated() + d.keptWhole());
    assertEquals(d.disaggregated(), d.transferred());
    long decodeSide = 0;
    for (InstanceResult ir : r.cluster().instances()) {
      if (ir.pool().equals("d")) {
        decodeSide += ir.metrics().completedRequests();
      } else {
        assertEquals(0, ir.metrics().injectedRequests());
      }
    }
    assertEquals(400, decodeSide, "every request ends on a decode instance, once");
    // the same inputs give the same result
    SimulationResult again = run(pd(Decider.PREFIX_THRESHOLD, Disaggregation.Transfer.links()), reqs,
        linear("p", 2, 400), linear("d", 3, 300));
    assertEquals(r.toJson(), again.toJson());
  }

  @Test
  void aDecisionTraceListsThePhasesInstancesOnly() {
    // instance 0 prefills, 1 and 2 decode: a split request's routing decision weighs instance 0
    // only, a request kept whole instances 1 and 2
    for (Decider decider : new Decider[] {Decider.ALWAYS, Decider.NEVER}) {
      SimulationResult r = Simulation.builder().source(RequestSource.of(List.of(req(1, 0, 161, 4))))
          .addPool(linear("p", 1, 1000)).addPool(linear("d", 2, 1000))
          .disaggregation(pd(decider, Disaggregation.Transfer.links())).traceDecisions(0).build().run();
      List<Integer> seen = new ArrayList<>();
      r.cluster().decisions().forEach(d -> {
        if (d.kind().equals("routing")) {
          d.candidates().forEach(c -> seen.add(c.instance()));
        }
      });
      assertEquals(decider == Decider.ALWAYS ? List.of(0) : List.of(1, 2), seen);
    }
  }

  @Test
  void refusesWhatItCannotDo() {
    assertThrows(IllegalArgumentException.class, () -> run(
        new Disaggregation(Decider.ALWAYS, 16, Map.of("p", Role.PREFILL, "d", Role.PREFILL),
            Map.of("p", KV, "d", KV), Disaggregation.Transfer.links(), Routers.roundRobin(), Routers.roundRobin()),
        List.of(req(1, 0, 10, 2)), linear("p", 1, 100), linear("d", 1, 100)));
    assertThrows(IllegalArgumentException.class, () -> run(
        new Disaggregation(Decider.ALWAYS, 16, Map.of("p", Role.DECODE, "d", Role.DECODE),
            Map.of("p", KV, "d", KV), Disaggregation.Transfer.links(), Routers.roundRobin(), Routers.roundRobin()),
        List.of(req(1, 0, 10, 2)), linear("p", 1, 100), linear("d", 1, 100)));
    assertThrows(IllegalArgumentException.class, () -> run(
        pd(Decider.ALWAYS, Disaggregation.Transfer.links()), List.of(req(1, 0, 10, 2)),
        linear("p", 1, 100), linear("x", 1, 100)), "a pool without KV figures");
  }
}
