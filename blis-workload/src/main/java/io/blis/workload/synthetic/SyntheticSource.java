package io.blis.workload.synthetic;

import io.blis.workload.PromptTokens;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.Sampling;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Merges the per-client generators with a binary heap keyed by (arrival, client index), and
 * produces closed-loop session rounds in {@link #onFinished}. Memory is O(clients + live sessions).
 */
final class SyntheticSource implements RequestSource {

  private final long seed;
  private final long maxOpenLoopRequests;
  private final long horizonUs;
  private final List<ClientSpec> clients;
  private final ClientGenerator[] heap;
  /** Whether a client runs multi-turn sessions (whose rounds {@link #onFinished} makes). */
  private final boolean multiTurn;
  private int heapSize;
  private long openLoopSent;
  private long nextId;
  /** Later requests of closed-loop users sent: they count toward the request cap. */
  private long userFollowUps;
  /** Whether the request count is Go BLIS's (later rounds count where they would arrive open-loop). */
  private final boolean goCount;
  /** Sessions each client started (Go BLIS's count caps them). */
  private final long[] sessionsStarted;
  /**
   * Go BLIS's count: the later rounds of the sessions started, at the times Go BLIS stamps them
   * before it simulates (the previous round's time + think time + 1 us per output token of the
   * previous round), ordered by time: {time, session id, round, client index}.
   */
  private final java.util.PriorityQueue<long[]> laterRounds =
      new java.util.PriorityQueue<>((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
  /** Live multi-turn sessions: session id to the client that owns it. */
  private final Map<Long, ClientSpec> liveSessions = new HashMap<>();

  SyntheticSource(List<ClientSpec> clients, long seed, long maxOpenLoopRequests, long horizonUs) {
    this(clients, seed, maxOpenLoopRequests, horizonUs, false);
  }

  /**
   * @param goCount count {@code maxOpenLoopRequests} as Go BLIS does (see {@link
   *     SyntheticWorkload#ofGoBlis})
   */
  SyntheticSource(List<ClientSpec> clients, long seed, long maxOpenLoopRequests, long horizonUs, boolean goCount) {
    this.goCount = goCount;
    this.sessionsStarted = new long[clients.size()];
    this.seed = seed;
    this.maxOpenLoopRequests = maxOpenLoopRequests;
    this.horizonUs = horizonUs;
    this.clients = clients;
    this.heap = new ClientGenerator[clients.size()];
    this.multiTurn = clients.stream().anyMatch(c -> c.session().multiTurn());
    for (int i = 0; i < clients.size(); i++) {
      ClientGenerator g = new ClientGenerator(clients.get(i), i, seed, horizonUs);
      if (!g.done()) {
        heap[heapSize++] = g;
        siftUp(heapSize - 1);
      } else if (g.beyondTime && beyondTime == null) {
        beyondTime = g.client;
      }
    }
    if (heapSize == 0 && maxOpenLoopRequests > 0) {
      if (beyondTime != null) {
        throw beyondTime(beyondTime);
      }
      throw new IllegalArgumentException("the workload sends no request: every client's first"
          + " arrival falls after the horizon" + (horizonUs == Long.MAX_VALUE ? ""
              : " (" + horizonUs / 1e6 + " s)") + " or after its last lifecycle window");
    }
  }

  /** The first client whose next arrival was beyond the latest simulated time, or null. */
  private ClientSpec beyondTime;

  private static IllegalArgumentException beyondTime(ClientSpec c) {
    return new IllegalArgumentException("client " + c.id() + ": a request would arrive after the"
        + " latest simulated time, " + RequestSpec.MAX_TIME_WORDS + ": its rate ("
        + c.arrival().rateRps() + " requests/s) is too low for the number of requests; raise the"
        + " rate, or lower the number of requests or the horizon");
  }

  @Override
  public RequestSpec next() {
    if (heapSize == 0 && beyondTime != null && openLoopSent < maxOpenLoopRequests) {
      throw beyondTime(beyondTime);
    }
    if (heapSize == 0 || openLoopSent + userFollowUps >= maxOpenLoopRequests) {
      return null;
    }
    ClientGenerator g = heap[0];
    ClientSpec c = g.client;
    if (goCount && !c.session().closedLoopUsers()) {
      // the later rounds stamped before this arrival count first, as in Go BLIS's merged list
      while (!laterRounds.isEmpty() && laterRounds.peek()[0] < g.arrivalUs) {
        long[] later = laterRounds.poll();
        openLoopSent++;
        stampNextRound(later[0], later[1], (int) later[2], (int) later[3], -1);
        if (openLoopSent >= maxOpenLoopRequests) {
          return null;
        }
      }
    }
    long id = nextId++;
    openLoopSent++;
    int input = c.prefixLength() + g.contentTokens;
    if (input > RequestSpec.MAX_TOKENS) {
      throw new IllegalArgumentException("client " + c.id() + ": a prompt of " + input
          + " tokens (prefix " + c.prefixLength() + " + " + g.contentTokens + ") is longer than the "
          + RequestSpec.MAX_TOKENS + " a request may have; lower the input max or the prefix length");
    }
    int[] prompt = PromptTokens.build(seed, c.prefixGroup(), c.prefixLength(), id, input);
    long sessionId = -1;
    if (c.session().multiTurn()) {
      sessionId = id;
      liveSessions.put(sessionId, c);
      if (goCount && !c.session().closedLoopUsers()) {
        sessionsStarted[g.index]++;
        stampNextRound(g.arrivalUs, sessionId, 0, g.index, g.outputTokens);
      }
    }
    RequestSpec r = new RequestSpec(
        id, g.arrivalUs, prompt, g.outputTokens, c.sloClass(), c.tenant(), c.prefixGroup(),
        c.prefixLength(), sessionId, 0, c.timeoutUs(), 0, c.model(), g.adapter);
    g.advance();
    if (g.done() || (goCount && c.session().multiTurn() && !c.session().closedLoopUsers()
        && sessionsStarted[g.index] >= goSessionCap(c))) {
      if (g.beyondTime && beyondTime == null) {
        beyondTime = c;
      }
      heap[0] = heap[--heapSize];
      heap[heapSize] = null;
    }
    if (heapSize > 0) {
      siftDown(0);
    }
    return r;
  }

  /** Without multi-turn clients: the open-loop stream is all there is (ids are drawn by it alone). */
  @Override
  public boolean readableAhead() {
    return !multiTurn;
  }

  /**
   * Go BLIS generates a multi-turn client's sessions until their rounds reach twice the request
   * count: at most this many sessions.
   */
  private long goSessionCap(ClientSpec c) {
    if (maxOpenLoopRequests >= Long.MAX_VALUE / 2) {
      return Long.MAX_VALUE;
    }
    long rounds = c.session().rounds();
    return (2 * maxOpenLoopRequests + rounds - 1) / rounds;
  }

  /**
   * Stamps round {@code round + 1} of a session whose round {@code round} Go BLIS stamps at {@code
   * timeUs}: a think time and 1 us per output token later. The output tokens are those the round
   * gets ({@code outputTokens}, or for a later round drawn as {@link #onFinished} draws them).
   */
  private void stampNextRound(long timeUs, long sessionId, int round, int client, int outputTokens) {
    ClientSpec c = clients.get(client);
    if (round + 1 >= c.session().rounds()) {
      return;
    }
    int output = outputTokens >= 0 ? outputTokens : roundLengths(c, sessionId, round)[1];
    long next = timeUs + c.session().thinkTimeUs() + output;
    if (next < horizonUs) {
      laterRounds.add(new long[] {next, sessionId, round + 1, client});
    }
  }

  /** The new turn's input tokens and the output tokens of round {@code round} of a session, as drawn for it. */
  private int[] roundLengths(ClientSpec c, long sessionId, int round) {
    SplittableRandom rng = new SplittableRandom(Sampling.mix(Sampling.mix(seed, sessionId), round));
    int turn = c.input().sample(rng);
    return new int[] {turn, c.output().sample(rng)};
  }

  @Override
  public List<RequestSpec> onFinished(RequestSpec request, RequestOutcome outcome, long timeUs) {
    if (request.sessionId() < 0) {
      return List.of();
    }
    ClientSpec c = liveSessions.get(request.sessionId());
    if (c == null) {
      return List.of();
    }
    int round = request.round() + 1;
    long arrival = timeUs + c.session().thinkTimeUs();
    boolean spent = c.session().closedLoopUsers() && openLoopSent + userFollowUps >= maxOpenLoopRequests;
    if (outcome != RequestOutcome.COMPLETED || round >= c.session().rounds() || arrival > horizonUs || spent) {
      liveSessions.remove(request.sessionId());
      return List.of();
    }
    if (c.session().closedLoopUsers()) {
      userFollowUps++; // a user's next request counts as its first did
    }
    int[] lengths = roundLengths(c, request.sessionId(), round);
    int turn = lengths[0];
    int output = lengths[1];
    long id = nextId++;
    int[] prompt;
    if (c.session().accumulateContext()) {
      long input = (long) request.inputTokens() + request.outputTokens() + turn;
      if (input > RequestSpec.MAX_TOKENS) {
        throw new IllegalArgumentException("client " + c.id() + ": round " + round + " of session "
            + request.sessionId() + " would have a prompt of " + input + " tokens (the accumulated"
            + " context), longer than the " + RequestSpec.MAX_TOKENS + " a request may have; use"
            + " fewer session rounds or shorter lengths");
      }
      prompt = PromptTokens.build(
          seed, c.prefixGroup(), c.prefixLength(), request.sessionId(), (int) input);
    } else {
      if (c.prefixLength() + turn > RequestSpec.MAX_TOKENS) {
        throw new IllegalArgumentException("client " + c.id() + ": a prompt of "
            + (c.prefixLength() + turn) + " tokens is longer than the " + RequestSpec.MAX_TOKENS
            + " a request may have; lower the input max or the prefix length");
      }
      prompt = PromptTokens.build(seed, c.prefixGroup(), c.prefixLength(), id, c.prefixLength() + turn);
    }
    // every round of a session names the adapter its first round drew
    return List.of(new RequestSpec(
        id, arrival, prompt, output, c.sloClass(), c.tenant(), c.prefixGroup(), c.prefixLength(),
        request.sessionId(), round, c.timeoutUs(), 0, c.model(), request.adapter()));
  }

  private boolean less(ClientGenerator a, ClientGenerator b) {
    return a.arrivalUs < b.arrivalUs || (a.arrivalUs == b.arrivalUs && a.index < b.index);
  }

  private void siftUp(int i) {
    ClientGenerator x = heap[i];
    while (i > 0) {
      int parent = (i - 1) >>> 1;
      if (!less(x, heap[parent])) {
        break;
      }
      heap[i] = heap[parent];
      i = parent;
    }
    heap[i] = x;
  }

  private void siftDown(int i) {
    ClientGenerator x = heap[i];
    while (true) {
      int child = 2 * i + 1;
      if (child >= heapSize) {
        break;
      }
      if (child + 1 < heapSize && less(heap[child + 1], heap[child])) {
        child++;
      }
      if (!less(heap[child], x)) {
        break;
      }
      heap[i] = heap[child];
      i = child;
    }
    heap[i] = x;
  }
}
