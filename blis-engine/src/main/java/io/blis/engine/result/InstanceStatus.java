package io.blis.engine.result;

/**
 * What one instance of a {@link io.blis.engine.LiveSimulation} holds at the current simulated time.
 *
 * @param index instance index
 * @param pool pool name ("" for a single pool)
 * @param running requests in the running batch
 * @param waiting requests in the waiting queue
 * @param inFlight requests routed there and not yet ended (on their way to the queue, waiting or
 *     running)
 * @param kvUsedBlocks GPU KV blocks in use
 * @param kvTotalBlocks GPU KV blocks of the instance
 * @param blockSizeTokens tokens per KV block
 * @param preemptions preemptions so far
 * @param steps engine steps so far
 * @param prefixQueriedTokens prompt tokens looked up in the prefix cache so far
 * @param prefixHitTokens of those, tokens found cached
 * @param maxModelLen the instance's {@code max_model_len} (tokens; 0 when unlimited)
 * @param maxNumSeqs the instance's {@code max_num_seqs}
 * @param maxLoras the instance's LoRA adapter slots ({@code max_loras}); 0 when it serves none
 * @param runningAdapters the adapters its running requests name, sorted, each once
 * @param waitingAdapters the adapters its waiting requests name, sorted, each once
 * @param speculative what its speculative decoding did so far (vLLM's {@code vllm:spec_decode_*} counters); null when
 *     it does not speculate
 */
public record InstanceStatus(int index, String pool, int running, int waiting, int inFlight,
    long kvUsedBlocks, long kvTotalBlocks, int blockSizeTokens, long preemptions, long steps,
    long prefixQueriedTokens, long prefixHitTokens, int maxModelLen, int maxNumSeqs, int maxLoras,
    java.util.List<String> runningAdapters, java.util.List<String> waitingAdapters,
    io.blis.engine.spec.SpeculativeCounts speculative) {

  /** Without speculative decoding. */
  public InstanceStatus(int index, String pool, int running, int waiting, int inFlight,
      long kvUsedBlocks, long kvTotalBlocks, int blockSizeTokens, long preemptions, long steps,
      long prefixQueriedTokens, long prefixHitTokens, int maxModelLen, int maxNumSeqs, int maxLoras,
      java.util.List<String> runningAdapters, java.util.List<String> waitingAdapters) {
    this(index, pool, running, waiting, inFlight, kvUsedBlocks, kvTotalBlocks, blockSizeTokens, preemptions, steps,
        prefixQueriedTokens, prefixHitTokens, maxModelLen, maxNumSeqs, maxLoras, runningAdapters, waitingAdapters, null);
  }

  /** An instance serving no LoRA adapters. */
  public InstanceStatus(int index, String pool, int running, int waiting, int inFlight,
      long kvUsedBlocks, long kvTotalBlocks, int blockSizeTokens, long preemptions, long steps,
      long prefixQueriedTokens, long prefixHitTokens, int maxModelLen, int maxNumSeqs) {
    this(index, pool, running, waiting, inFlight, kvUsedBlocks, kvTotalBlocks, blockSizeTokens, preemptions, steps,
        prefixQueriedTokens, prefixHitTokens, maxModelLen, maxNumSeqs, 0, java.util.List.of(), java.util.List.of());
  }

  public InstanceStatus {
    runningAdapters = java.util.List.copyOf(runningAdapters);
    waitingAdapters = java.util.List.copyOf(waitingAdapters);
  }

  /** Fraction of the GPU KV blocks in use, 0..1. */
  public double kvUsage() {
    return kvTotalBlocks == 0 ? 0 : (double) kvUsedBlocks / kvTotalBlocks;
  }
}
