package io.blis.engine;

import io.blis.api.Phase;
import io.blis.api.RequestView;
import io.blis.engine.metrics.CompletedRequest;
import io.blis.engine.policy.Priorities;
import io.blis.kvcache.BlockHashes;
import io.blis.kvcache.BlockTable;
import io.blis.workload.RequestSpec;

/**
 * The engine's mutable state of one request; also the read-only {@link RequestView} plugins see.
 * Times are engine microseconds.
 */
final class EngineRequest implements RequestView, CompletedRequest {

  enum State {
    ARRIVED,
    WAITING,
    RUNNING,
    /** Disaggregated: prefilled, waiting for a decode instance with room or for its KV to move. */
    HANDED_OFF,
    FINISHED
  }

  final RequestSpec spec;
  final long arrivalUs;
  final int inputTokens;
  final int outputTokens;
  final long deadlineUs;
  /** vLLM priority of the request's SLO class (0 critical .. 7 background), whatever the policy. */
  final int sloRank;
  /** Scheduling priority (lower is more urgent), as the priority policy last set it. */
  int priority;

  State state = State.ARRIVED;
  /** Index of the instance it was routed to; -1 before it is routed. */
  int instanceIndex = -1;
  /** Prompt full-block hashes computed for routing (prefix-aware routers), or null. */
  long[] promptBlockHashes;
  /** Block size of {@link #promptBlockHashes}. */
  int promptHashBlockSize;
  BlockTable table;
  /** Tokens whose KV is computed (prompt, then generated tokens). */
  int progress;
  /** Tokens to prefill at the current admission: prompt plus tokens generated before preemption. */
  int prefillTarget;
  int generated;
  int newTokens;
  int preemptions;
  /**
   * While its prefix is being copied from the CPU KV tier: the time the copy completes (it is in
   * the running list, holds its blocks, and gets no tokens until then); 0 otherwise.
   */
  long loadDoneUs;
  /**
   * Where a waiting request stands in a fetch of its prefix from a secondary offload tier: {@link
   * Instance#FETCH_IDLE} (none, or ended: admit as the tiers now hold it), asking the tiers, or
   * waiting for blocks {@code fetchFrom .. fetchFrom+fetchCount-1} to be read into the CPU tier.
   */
  byte fetchPhase;
  int fetchFrom;
  int fetchCount;
  /** Live mode: the client went away before the request was routed. */
  boolean aborted;
  /** Whether the request is part of the step in flight. */
  boolean inFlight;
  long firstScheduledUs = -1;
  /** Engine time the request last joined the waiting queue (arrival or preemption). */
  long queuedUs;
  /** Latency charged once at first scheduling (not on the engine clock). */
  long schedulingOverheadUs;
  /** Latency charged per preemption so far. */
  long preemptionOverheadUs;
  /** Latency charged per output token so far. */
  long tokenOverheadUs;
  int cachedPromptTokens = -1;
  long firstTokenClientUs = -1;
  long lastTokenClientUs = -1;
  /** Client-visible inter-token intervals, one per token after the first. */
  long[] itlUs;
  int itlCount;
  /** The served model it names (an index of the engine's model routing); -1 when it names none. */
  int model = -1;
  /** Disaggregated (prefilled on one instance, decoded on another). */
  boolean disaggregated;
  /** Disaggregated: the instance it was prefilled on; -1 before. */
  int prefillInstance = -1;
  /** Disaggregated: its blocks on the prefill instance, held until its KV moved; null after. */
  BlockTable prefillTable;
  /** Disaggregated: when its prefill ended, its KV started moving and arrived; -1 before. */
  long prefillDoneUs = -1;
  long transferStartUs = -1;
  long transferEndUs = -1;
  /** Disaggregated: prompt tokens whose KV moves to the decode instance. */
  int tokensToMove;

  /** Whether a scheduler has passed it over because its step already used max_loras adapters. */
  boolean passedOverForAdapter;

  EngineRequest(RequestSpec spec, long arrivalUs, long deadlineUs) {
    this.spec = spec;
    this.arrivalUs = arrivalUs;
    this.inputTokens = spec.inputTokens();
    this.outputTokens = spec.outputTokens();
    this.deadlineUs = deadlineUs;
    this.sloRank = Priorities.sloClassPriority(spec.sloClass());
    this.priority = sloRank;
  }


  boolean inPrefill() {
    return progress < prefillTarget;
  }

  @Override
  public long id() {
    return spec.id();
  }

  @Override
  public long arrivalTimeUs() {
    return arrivalUs;
  }

  @Override
  public int inputTokens() {
    return inputTokens;
  }

  @Override
  public int progressIndex() {
    return progress;
  }

  @Override
  public int newTokens() {
    return newTokens;
  }

  @Override
  public int generatedTokens() {
    return generated;
  }

  @Override
  public Phase phase() {
    return inPrefill() || state != State.RUNNING ? Phase.PREFILL : Phase.DECODE;
  }

  @Override
  public int priority() {
    return priority;
  }

  @Override
  public String sloClass() {
    return spec.sloClass();
  }

  @Override
  public String tenant() {
    return spec.tenant();
  }

  @Override
  public int preemptions() {
    return preemptions;
  }

  @Override
  public String adapter() {
    return spec.adapter();
  }

  @Override
  public long[] promptBlockHashes(int blockSizeTokens) {
    if (promptBlockHashes == null || promptHashBlockSize != blockSizeTokens) {
      // keyed by the adapter as the instances' block tables are, so routers see the same hits
      promptBlockHashes = BlockHashes.ofFullBlocks(spec.promptTokens(), blockSizeTokens, spec.adapter());
      promptHashBlockSize = blockSizeTokens;
    }
    return promptBlockHashes;
  }

  @Override
  public String toString() {
    return "request " + spec.id() + " (" + state + ", progress " + progress + "/" + prefillTarget
        + ", generated " + generated + "/" + outputTokens + ")";
  }

  // ---- CompletedRequest (read once it completed)

  @Override
  public int outputTokens() {
    return outputTokens;
  }

  @Override
  public int cachedPromptTokens() {
    return cachedPromptTokens;
  }

  @Override
  public long e2eUs() {
    return lastTokenClientUs - arrivalUs;
  }

  @Override
  public long ttftUs() {
    return firstTokenClientUs - arrivalUs;
  }

  @Override
  public long schedulingDelayUs() {
    return firstScheduledUs - arrivalUs;
  }

  @Override
  public int itlCount() {
    return itlCount;
  }

  @Override
  public long itlUs(int i) {
    return itlUs[i];
  }
}
