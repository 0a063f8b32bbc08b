package io.blis.latency.fit;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Rebuilds the batch of traced steps that have a {@code step.BATCH_SUMMARY} but no {@code
 * step.REQUEST_SNAPSHOT}s from the request journeys, as vLLM's journey tracing records them (and
 * {@code blis run --otel-out} mimics):
 *
 * <ul>
 *   <li>{@code SCHEDULED} carries the step being formed ({@code scheduler.step}): the request is
 *       in that step's batch and in every later one until the step whose output {@code FINISHED}
 *       it (that step included) or until the step being formed when it was {@code PREEMPTED}
 *       (that step excluded). Its {@code prefill_done_tokens} on a first schedule is where its
 *       computation starts (prompt tokens found in the prefix cache); on a resume it is a
 *       high-water mark, so the restart point is unknown.
 *   <li>The request computes {@code prompt + outputs so far} tokens (its {@code
 *       prefill_total_tokens} plus {@code decode_done_tokens} on {@code SCHEDULED}) in chunks of at
 *       least one token per step, up to the step whose output is its next token ({@code FIRST_TOKEN}
 *       on a first schedule; otherwise counted back from the output tokens at the episode's end),
 *       then one token per step (decode), with a context of everything computed before.
 *   <li>The chunk sizes come from what is known: a prefill done in one step computes all of it; a
 *       step's summary totals ({@code batch.prefill_tokens + batch.decode_tokens}) give the one
 *       chunk of that step not otherwise known; a prefill's total gives its one chunk not otherwise
 *       known; repeated until nothing more follows.
 * </ul>
 *
 * <p>A step's batch is used only when it is complete and agrees with its summary: as many
 * requests as the summary counts, in the same prefill/decode split with the same token totals
 * (vLLM counts a request as prefill while it has no output token, the simulator also while it
 * computes its prompt again after a preemption: either split is accepted). Every other step is
 * left out and counted by reason ({@link Reason}): when only some journeys were traced (vLLM's
 * {@code --journey-tracing-sample-rate}), the steps whose batch includes an untraced request are
 * left out, so no fit sees a partial batch. The rebuilt steps are exact when the journeys are (the
 * simulator's traces rebuild to the snapshots it would write, up to the KV block counts, which
 * are not rebuilt: -1).
 *
 * <p>Assumed, as vLLM v1 schedules running requests first: a running request gets tokens in every
 * step until it finishes or is preempted. A request that a step skipped (its token
 * budget spent) is caught where its first token or its output count contradicts that, and its
 * steps are left out; a skip the journeys cannot show would shift its decode context by a token.
 * Two prefill chunks of one traced step that nothing else pins down (a chunked prefill ending
 * where another begins, or a resume, whose restart point vLLM does not report) leave the step out.
 *
 * <p>Cost: linear in the journeys' events plus, per traced step, its batch; nothing per untraced
 * step except the prefill chunks of requests that span it.
 */
public final class BatchReconstruction {

  private BatchReconstruction() {}

  /** Why a traced step without snapshots was left out. */
  public enum Reason {
    /** The summary counts more requests than the journeys put in the step. */
    UNTRACED_REQUESTS("untraced_requests",
        "the summary counts more requests than have a journey (journey sampling?)"),
    /** A request's journey does not say whether it was in the step. */
    UNCERTAIN_JOURNEY("uncertain_journeys",
        "a request's journey does not say whether it ran in the step (a request cut by the trace's"
            + " start or end, an abort, or journey events that disagree)"),
    /** Some prefill chunk of the step, or its context, is not determined. */
    CHUNKS_UNDETERMINED("prefill_chunks_undetermined",
        "the journeys and summaries do not determine its prefill chunks"),
    /** The rebuilt batch disagrees with the step's summary. */
    DISAGREES("disagrees_with_summary", "the batch rebuilt from the journeys disagrees with its summary"),
    /** The summary has no request. */
    EMPTY("empty", "its summary has no request");

    private final String key;
    private final String description;

    Reason(String key, String description) {
      this.key = key;
      this.description = description;
    }

    /** Short name, as the fit report counts it. */
    public String key() {
      return key;
    }

    /** What it means, for messages. */
    public String description() {
      return description;
    }
  }

  /**
   * What was rebuilt.
   *
   * @param steps the traced steps without snapshots whose batch was rebuilt, with it, in input
   *     order
   * @param leftOut the others by {@link Reason#key()}, with counts (only reasons that occurred)
   */
  public record Result(List<TracedStep> steps, Map<String, Long> leftOut) {}

  /**
   * Rebuilds the batch of each step of {@code steps} that has no request snapshots from {@code
   * journeys}. Steps with snapshots are not rebuilt (and not returned), but their summaries take
   * part in determining prefill chunks.
   */
  public static Result reconstruct(List<TracedStep> steps, List<TracedJourney> journeys) {
    Map<String, List<TracedStep>> stepsByInstance = new LinkedHashMap<>();
    for (TracedStep s : steps) {
      stepsByInstance.computeIfAbsent(s.instance(), k -> new ArrayList<>()).add(s);
    }
    Map<String, List<TracedJourney>> journeysByInstance = new HashMap<>();
    for (TracedJourney j : journeys) {
      if (stepsByInstance.containsKey(j.instance())) {
        journeysByInstance.computeIfAbsent(j.instance(), k -> new ArrayList<>()).add(j);
      }
    }
    Map<TracedStep, TracedStep> rebuilt = new IdentityHashMap<>();
    long[] reasons = new long[Reason.values().length];
    for (Map.Entry<String, List<TracedStep>> e : stepsByInstance.entrySet()) {
      new InstanceBatches(e.getValue(), journeysByInstance.getOrDefault(e.getKey(), List.of()))
          .rebuild(rebuilt, reasons);
    }
    List<TracedStep> out = new ArrayList<>();
    for (TracedStep s : steps) {
      TracedStep r = rebuilt.get(s);
      if (r != null) {
        out.add(r);
      }
    }
    Map<String, Long> leftOut = new LinkedHashMap<>();
    for (Reason r : Reason.values()) {
      if (reasons[r.ordinal()] > 0) {
        leftOut.put(r.key(), reasons[r.ordinal()]);
      }
    }
    return new Result(out, leftOut);
  }

  /**
   * One stretch of a request in the running batch: from the step that scheduled it to its last
   * step, both certain. Its prefill steps are {@code a .. a + prefillSteps - 1}; the rest decode.
   */
  private static final class Episode {
    final String requestId;
    final int prompt;
    /** Output tokens when scheduled. */
    final int outputs;
    final int preemptions;
    /** First and last step in the batch. */
    final long a;
    final long last;
    /** The step whose output completed the prefill (its next token), -1 when after {@code last}. */
    final long prefillEnd;
    /** Tokens computed before {@code a} (prefix-cache hits), -1 when unknown. */
    long start;
    final int prefillSteps;
    /** Index of its first prefill chunk in the chunk array. */
    int varBase;
    long knownSum;
    int unknown;
    boolean bad;

    Episode(String requestId, int prompt, int outputs, int preemptions, long a, long last,
        long prefillEnd, long start) {
      this.requestId = requestId;
      this.prompt = prompt;
      this.outputs = outputs;
      this.preemptions = preemptions;
      this.a = a;
      this.last = last;
      this.prefillEnd = prefillEnd;
      this.start = start;
      this.prefillSteps = (int) ((prefillEnd >= 0 ? prefillEnd : last) - a + 1);
    }

    /** Tokens to compute in the prefill steps, -1 when unknown. */
    long total() {
      return prefillEnd >= 0 && start >= 0 ? (long) prompt + outputs - start : -1;
    }

    boolean prefillAt(long step) {
      return prefillEnd < 0 || step <= prefillEnd;
    }
  }

  /** The steps of one instance and the journeys of requests it ran. */
  private static final class InstanceBatches {
    private final TracedStep[] steps;
    private final long[] ids;
    private final List<Episode> episodes = new ArrayList<>();
    /** Step ranges in which some request's presence is unknown: {lo, hi} inclusive. */
    private final List<long[]> uncertain = new ArrayList<>();

    // per traced step
    private int[] memberStart;
    private int[] members; // episode indices, by step (CSR)
    private boolean[] unsure;
    private long[] knownSum;
    private int[] unknown;
    private boolean[] bad;
    // per prefill chunk
    private long[] chunk;
    private int[] chunkStep; // traced step index, -1 when the step was not traced
    private int[] chunkEpisode;

    InstanceBatches(List<TracedStep> list, List<TracedJourney> journeys) {
      steps = list.toArray(new TracedStep[0]);
      Arrays.sort(steps, (x, y) -> Long.compare(x.stepId(), y.stepId()));
      ids = new long[steps.length];
      for (int k = 0; k < steps.length; k++) {
        ids[k] = steps[k].stepId();
      }
      for (TracedJourney j : journeys) {
        parse(j);
      }
    }

    // ------------------------------------------------------------ journeys to episodes

    private void uncertain(long lo, long hi) {
      if (lo <= hi) {
        uncertain.add(new long[] {lo, hi});
      }
    }

    /** The SCHEDULED event that opened the current episode, and its FIRST_TOKEN step. */
    private static final class Open {
      final TracedJourney.Event scheduled;
      long firstToken = -1;

      Open(TracedJourney.Event scheduled) {
        this.scheduled = scheduled;
      }
    }

    private void parse(TracedJourney j) {
      Open open = null;
      boolean seenStart = false; // the journey's start is in the trace
      TracedJourney.Event firstTokenBeforeStart = null;
      long minStep = Long.MAX_VALUE;
      long maxStep = Long.MIN_VALUE;
      for (TracedJourney.Event e : j.core()) {
        if (e.step() >= 0) {
          minStep = Math.min(minStep, e.step());
          maxStep = Math.max(maxStep, e.step());
        }
      }
      for (TracedJourney.Event e : j.core()) {
        switch (e.name()) {
          case "QUEUED" -> seenStart = true;
          case "SCHEDULED" -> {
            if (e.step() < 0 || e.prefillTotal() < 0 || e.decodeDone() < 0) {
              uncertain(minStep, maxStep); // cannot be placed
              return;
            }
            if (open != null) {
              uncertain(open.scheduled.step(), e.step()); // no end between two schedules
            }
            open = new Open(e);
            seenStart = true;
          }
          case "FIRST_TOKEN" -> {
            if (open != null) {
              open.firstToken = e.step();
            } else if (!seenStart && e.step() >= 0) {
              firstTokenBeforeStart = e;
            }
          }
          case "PREEMPTED" -> {
            if (e.step() < 0) {
              uncertain(minStep, maxStep);
              return;
            }
            if (open != null) {
              close(j, open, e.step() - 1, e.decodeDone());
              open = null;
            } else if (!seenStart) {
              uncertain(Long.MIN_VALUE, e.step()); // ran before the trace began
            }
            seenStart = true;
          }
          case "FINISHED" -> {
            if (open != null) {
              String status = e.detail();
              boolean natural = status.isEmpty() || status.equals("stopped") || status.equals("length");
              if (e.step() < 0) {
                // no step ended it (a timeout): it may have run in any step started before its end
                uncertain(open.scheduled.step(), lastStepStartedBy(e.timeNs()));
              } else if (!natural) {
                uncertain(open.scheduled.step(), e.step());
              } else {
                close(j, open, e.step(), e.decodeDone());
              }
              open = null;
            } else if (!seenStart) {
              beganBeforeTrace(j, firstTokenBeforeStart, e, maxStep);
            }
            seenStart = true;
          }
          default -> { }
        }
      }
      if (open != null) {
        uncertain(open.scheduled.step(), Long.MAX_VALUE); // still running when the trace ended
      } else if (!seenStart && firstTokenBeforeStart != null) {
        uncertain(Long.MIN_VALUE, Long.MAX_VALUE); // neither start nor end in the trace
      }
    }

    /**
     * A journey whose scheduling came before the trace began and that ended with {@code finished}:
     * before its first token (or its end) it may have run in any step; after its first token, if
     * it was not preempted, it decoded in every step up to its end.
     */
    private void beganBeforeTrace(TracedJourney j, TracedJourney.Event firstToken,
        TracedJourney.Event finished, long maxStep) {
      String status = finished.detail();
      boolean natural = status.isEmpty() || status.equals("stopped") || status.equals("length");
      if (finished.step() < 0) {
        if (natural) {
          uncertain(Long.MIN_VALUE, maxStep);
        }
        return; // otherwise it may never have run here (rejected)
      }
      if (!natural && finished.prefillDone() <= 0 && finished.decodeDone() <= 0) {
        return; // rejected or aborted before it computed anything
      }
      long last = finished.step();
      if (natural && firstToken != null && finished.prefillTotal() >= 0
          && finished.decodeDone() == last - firstToken.step() + 1 && finished.preemptions() <= 0) {
        uncertain(Long.MIN_VALUE, firstToken.step());
        if (last > firstToken.step()) {
          episodes.add(new Episode(j.requestId(), finished.prefillTotal(), 0, 0,
              firstToken.step() + 1, last, firstToken.step(), -1));
        }
        return;
      }
      uncertain(Long.MIN_VALUE, last);
    }

    /** Ends an episode whose last step is {@code last}, with {@code outputsAtEnd} output tokens. */
    private void close(TracedJourney j, Open open, long last, int outputsAtEnd) {
      TracedJourney.Event s = open.scheduled;
      long a = s.step();
      if (last < a) {
        return; // preempted while the step that scheduled it was formed: never ran
      }
      int generated = outputsAtEnd - s.decodeDone();
      long prefillEnd;
      if (outputsAtEnd < 0 || generated < 0) {
        uncertain(a, last);
        return;
      }
      if (generated >= 1) {
        prefillEnd = last - generated + 1; // one token per step from the prefill's last on
        if (prefillEnd < a || (open.firstToken >= 0 && open.firstToken != prefillEnd)) {
          uncertain(a, last); // a step skipped it, or the events disagree
          return;
        }
      } else {
        if (open.firstToken >= 0) {
          uncertain(a, last);
          return;
        }
        prefillEnd = -1; // still computing its prompt at the end
      }
      boolean first = "FIRST".equals(s.detail()) && s.decodeDone() == 0;
      long start = first && s.prefillDone() >= 0 ? s.prefillDone() : -1;
      Episode ep = new Episode(j.requestId(), s.prefillTotal(), s.decodeDone(),
          Math.max(0, s.preemptions()), a, last, prefillEnd, start);
      long total = ep.total();
      if (total >= 0 && total < ep.prefillSteps) {
        uncertain(a, last); // each step computes at least one token
        return;
      }
      episodes.add(ep);
    }

    /**
     * The last traced step that started by {@code timeNs} (journey event times and step start
     * times on one clock, as a simulated trace has them), {@code Long.MAX_VALUE} when every traced
     * step did.
     */
    private long lastStepStartedBy(long timeNs) {
      int lo = 0;
      int hi = steps.length; // first step that started after timeNs
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (steps[mid].startNs() <= timeNs) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      return lo == steps.length ? Long.MAX_VALUE : lo == 0 ? Long.MIN_VALUE : ids[lo - 1];
    }

    // ------------------------------------------------------------ chunks

    private int firstIndexAtLeast(long step) {
      int i = Arrays.binarySearch(ids, step);
      return i >= 0 ? i : -i - 1;
    }

    private void index() {
      int n = steps.length;
      // uncertain ranges: a difference array over the traced steps
      int[] diff = new int[n + 1];
      for (long[] r : uncertain) {
        int lo = firstIndexAtLeast(r[0]);
        int hi = r[1] == Long.MAX_VALUE ? n : firstIndexAtLeast(r[1] + 1);
        if (lo < hi) {
          diff[lo]++;
          diff[hi]--;
        }
      }
      unsure = new boolean[n];
      int depth = 0;
      for (int k = 0; k < n; k++) {
        depth += diff[k];
        unsure[k] = depth > 0;
      }
      // members of each traced step
      memberStart = new int[n + 1];
      int vars = 0;
      for (Episode ep : episodes) {
        ep.varBase = vars;
        vars += ep.prefillSteps;
        for (int k = firstIndexAtLeast(ep.a); k < n && ids[k] <= ep.last; k++) {
          memberStart[k + 1]++;
        }
      }
      for (int k = 0; k < n; k++) {
        memberStart[k + 1] += memberStart[k];
      }
      members = new int[memberStart[n]];
      int[] fill = Arrays.copyOf(memberStart, n);
      chunk = new long[vars];
      Arrays.fill(chunk, -1);
      chunkStep = new int[vars];
      Arrays.fill(chunkStep, -1);
      chunkEpisode = new int[vars];
      for (int e = 0; e < episodes.size(); e++) {
        Episode ep = episodes.get(e);
        Arrays.fill(chunkEpisode, ep.varBase, ep.varBase + ep.prefillSteps, e);
        for (int k = firstIndexAtLeast(ep.a); k < n && ids[k] <= ep.last; k++) {
          members[fill[k]++] = e;
          if (ep.prefillAt(ids[k])) {
            chunkStep[ep.varBase + (int) (ids[k] - ep.a)] = k;
          }
        }
        long total = ep.total();
        if (total >= 0 && ep.prefillSteps == 1) {
          chunk[ep.varBase] = total; // a prefill in one step computes all of it
        }
      }
    }

    /** Solves for the chunks: step sums and prefill totals with one unknown, until none is left. */
    private void solve() {
      int n = steps.length;
      knownSum = new long[n];
      unknown = new int[n];
      bad = new boolean[n];
      for (Episode ep : episodes) {
        for (int v = ep.varBase; v < ep.varBase + ep.prefillSteps; v++) {
          if (chunk[v] >= 0) {
            ep.knownSum += chunk[v];
          } else {
            ep.unknown++;
          }
        }
      }
      ArrayDeque<Integer> queue = new ArrayDeque<>(); // k >= 0: step k; k < 0: episode -k - 1
      for (int k = 0; k < n; k++) {
        for (int m = memberStart[k]; m < memberStart[k + 1]; m++) {
          Episode ep = episodes.get(members[m]);
          if (!ep.prefillAt(ids[k])) {
            knownSum[k]++;
          } else {
            long c = chunk[ep.varBase + (int) (ids[k] - ep.a)];
            if (c >= 0) {
              knownSum[k] += c;
            } else {
              unknown[k]++;
            }
          }
        }
        if (unknown[k] == 1) {
          queue.add(k);
        }
      }
      for (int e = 0; e < episodes.size(); e++) {
        Episode ep = episodes.get(e);
        if (ep.unknown == 1 && ep.total() >= 0) {
          queue.add(-e - 1);
        }
      }
      while (!queue.isEmpty()) {
        int item = queue.poll();
        if (item >= 0) {
          int k = item;
          if (unknown[k] != 1 || bad[k] || !equation(k)) {
            continue;
          }
          int v = -1;
          for (int m = memberStart[k]; m < memberStart[k + 1] && v < 0; m++) {
            Episode ep = episodes.get(members[m]);
            if (ep.prefillAt(ids[k])) {
              int u = ep.varBase + (int) (ids[k] - ep.a);
              if (chunk[u] < 0) {
                v = u;
              }
            }
          }
          long value = summaryTokens(steps[k]) - knownSum[k];
          Episode ep = episodes.get(chunkEpisode[v]);
          long total = ep.total();
          if (value < 1 || (total >= 0 && value > total - ep.knownSum - (ep.unknown - 1))) {
            bad[k] = true;
            continue;
          }
          assign(v, value, queue);
        } else {
          Episode ep = episodes.get(-item - 1);
          long total = ep.total();
          if (ep.unknown != 1 || ep.bad || total < 0) {
            continue;
          }
          int v = ep.varBase;
          while (chunk[v] >= 0) {
            v++;
          }
          long value = total - ep.knownSum;
          if (value < 1) {
            ep.bad = true;
            continue;
          }
          assign(v, value, queue);
        }
      }
      for (Episode ep : episodes) {
        long total = ep.total();
        if (ep.unknown == 0 && total >= 0 && ep.knownSum != total) {
          ep.bad = true;
        }
        if (ep.unknown == 0 && ep.start < 0 && ep.prefillEnd >= 0) {
          ep.start = (long) ep.prompt + ep.outputs - ep.knownSum; // a resume's restart point
          if (ep.start < 0) {
            ep.bad = true;
          }
        }
      }
    }

    private void assign(int v, long value, ArrayDeque<Integer> queue) {
      chunk[v] = value;
      int e = chunkEpisode[v];
      Episode ep = episodes.get(e);
      ep.knownSum += value;
      ep.unknown--;
      if (ep.unknown == 1 && ep.total() >= 0) {
        queue.add(-e - 1);
      }
      int k = chunkStep[v];
      if (k >= 0) {
        knownSum[k] += value;
        unknown[k]--;
        if (unknown[k] == 1) {
          queue.add(k);
        }
      }
    }

    /** Whether step {@code k}'s summary totals are an equation over its members' tokens. */
    private boolean equation(int k) {
      return !unsure[k] && memberStart[k + 1] - memberStart[k] == summaryRequests(steps[k]);
    }

    private static long summaryTokens(TracedStep s) {
      return s.prefillTokens() + s.decodeTokens();
    }

    private static int summaryRequests(TracedStep s) {
      return s.prefillRequests() + s.decodeRequests();
    }

    // ------------------------------------------------------------ batches

    void rebuild(Map<TracedStep, TracedStep> out, long[] reasons) {
      index();
      solve();
      for (int k = 0; k < steps.length; k++) {
        TracedStep s = steps[k];
        if (!s.requests().isEmpty()) {
          continue; // the snapshots are the batch
        }
        Reason why = check(k);
        if (why != null) {
          reasons[why.ordinal()]++;
          continue;
        }
        List<TracedStep.Request> batch = batch(k);
        if (batch == null) {
          reasons[Reason.CHUNKS_UNDETERMINED.ordinal()]++;
        } else if (batch.isEmpty() || !agrees(s, batch)) {
          reasons[Reason.DISAGREES.ordinal()]++;
        } else {
          out.put(s, new TracedStep(s.instance(), s.stepId(), s.startNs(), s.endNs(),
              s.durationUs(), s.prefillRequests(), s.decodeRequests(), s.prefillTokens(),
              s.decodeTokens(), s.runningDepth(), s.waitingDepth(), s.kvBlocksTotal(),
              s.kvBlocksFree(), s.finished(), s.preempted(), batch));
        }
      }
    }

    private Reason check(int k) {
      int expected = summaryRequests(steps[k]);
      int found = memberStart[k + 1] - memberStart[k];
      if (expected == 0) {
        return Reason.EMPTY;
      }
      if (unsure[k]) {
        return Reason.UNCERTAIN_JOURNEY;
      }
      if (found < expected) {
        return Reason.UNTRACED_REQUESTS;
      }
      if (found > expected || bad[k]) {
        return Reason.DISAGREES;
      }
      for (int m = memberStart[k]; m < memberStart[k + 1]; m++) {
        if (episodes.get(members[m]).bad) {
          return Reason.DISAGREES;
        }
      }
      return unknown[k] > 0 ? Reason.CHUNKS_UNDETERMINED : null;
    }

    /**
     * The batch of step {@code k}; null when a prefill's context is not determined, empty when a
     * prefill's chunks do not add up.
     */
    private List<TracedStep.Request> batch(int k) {
      long step = ids[k];
      List<TracedStep.Request> batch = new ArrayList<>(memberStart[k + 1] - memberStart[k]);
      for (int m = memberStart[k]; m < memberStart[k + 1]; m++) {
        Episode ep = episodes.get(members[m]);
        long target = (long) ep.prompt + ep.outputs;
        if (!ep.prefillAt(step)) {
          long sincePrefill = step - ep.prefillEnd;
          batch.add(new TracedStep.Request(ep.requestId, false, ep.prompt,
              (int) (target + sincePrefill - 1), (int) (ep.outputs + sincePrefill), ep.preemptions,
              1, -1, -1));
          continue;
        }
        int at = (int) (step - ep.a);
        long context = context(ep, at);
        long c = chunk[ep.varBase + at];
        if (context < 0) {
          return null;
        }
        if (step == ep.prefillEnd ? context + c != target : context + c >= target) {
          return List.of();
        }
        batch.add(new TracedStep.Request(ep.requestId, true, ep.prompt, (int) context, ep.outputs,
            ep.preemptions, (int) c, -1, -1));
      }
      return batch;
    }

    /** Tokens computed before prefill step {@code at} of {@code ep}, -1 when not determined. */
    private long context(Episode ep, int at) {
      if (ep.start >= 0) {
        long sum = ep.start;
        for (int v = ep.varBase; v < ep.varBase + at; v++) {
          if (chunk[v] < 0) {
            sum = -1;
            break;
          }
          sum += chunk[v];
        }
        if (sum >= 0) {
          return sum;
        }
      }
      if (ep.prefillEnd >= 0) { // counted back from the prefill's end
        long sum = (long) ep.prompt + ep.outputs;
        for (int v = ep.varBase + at; v < ep.varBase + ep.prefillSteps; v++) {
          if (chunk[v] < 0) {
            return -1;
          }
          sum -= chunk[v];
        }
        return sum;
      }
      return -1;
    }

    /**
     * Whether {@code batch} matches the summary's counts and tokens, counting as prefill either
     * the requests computing their prompt (again) or those without an output token.
     */
    private static boolean agrees(TracedStep s, List<TracedStep.Request> batch) {
      long tokens = 0;
      int byPhase = 0;
      long byPhaseTokens = 0;
      int byOutputs = 0;
      long byOutputsTokens = 0;
      for (TracedStep.Request q : batch) {
        tokens += q.scheduledTokens();
        if (q.prefill()) {
          byPhase++;
          byPhaseTokens += q.scheduledTokens();
        }
        if (q.outputTokens() == 0) {
          byOutputs++;
          byOutputsTokens += q.scheduledTokens();
        }
      }
      if (tokens != summaryTokens(s)) {
        return false;
      }
      return (byPhase == s.prefillRequests() && byPhaseTokens == s.prefillTokens())
          || (byOutputs == s.prefillRequests() && byOutputsTokens == s.prefillTokens());
    }
  }
}
