package io.blis.api;

/**
 * A read-only snapshot of one serving instance as a router sees it. Valid only during the call
 * that receives it.
 */
public interface InstanceSnapshot {

  /** {@return the index of the instance in the cluster, from 0} The value routers return. */
  int index();

  /** {@return the number of requests waiting in the instance's queue} */
  int queueDepth();

  /** {@return the number of requests in the instance's running batch} */
  int runningBatchSize();

  /** {@return the fraction of the instance's KV blocks in use, in {@code [0, 1]}} */
  double kvUtilization();

  /**
   * {@return the number of requests routed to the instance and not finished yet} Always current:
   * it counts requests still on their way to the queue, waiting, or running.
   */
  int inFlight();

  /**
   * Number of leading prompt tokens of the request being routed already cached there (read from
   * the instance's prefix cache at the time of the call). A multiple of the block size, since only
   * full blocks are cached; 0 when no request is being routed (during admission).
   *
   * @return the number of cached leading prompt tokens
   */
  int cachedPrefixTokens();

  /**
   * {@return the name of the pool the instance belongs to; empty when the cluster has a single
   * pool}
   */
  default String pool() {
    return "";
  }

  /**
   * {@return the prompt tokens of the requests waiting in the instance's queue, cached or not} 0
   * by default.
   */
  default long queuedPromptTokens() {
    return 0;
  }

  /**
   * Simulation time, in microseconds, at which the queue, batch and KV figures of this snapshot
   * were read. Routers see instances as a real gateway does: through figures refreshed
   * periodically, while {@link #inFlight()} is the router's own, always current, count.
   *
   * @return the time of the last refresh in microseconds; 0 by default
   */
  default long refreshedAtUs() {
    return 0;
  }

  /**
   * Whether the instance has the LoRA adapter {@code adapter} at hand, as a gateway learns it
   * from vLLM's {@code vllm:lora_requests_info} metric: loaded on its GPU, or named by a request
   * running or waiting there. Refreshed with the queue and batch figures ({@link #refreshedAtUs()}).
   *
   * @param adapter an adapter name; empty (the base model) is never held
   * @return false by default, and when the instance serves no adapters
   */
  default boolean holdsAdapter(String adapter) {
    return false;
  }

  /**
   * {@return how many more LoRA adapters the instance could load without evicting one} Its
   * {@code max_loras} GPU slots less those in use, as of {@link #refreshedAtUs()}; 0 by default
   * and when the instance serves no adapters.
   */
  default int freeAdapterSlots() {
    return 0;
  }
}
