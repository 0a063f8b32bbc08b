package io.blis.engine.cluster;

import io.blis.api.LatencyModel;

/**
 * Wraps every latency model a cluster's pools create, knowing the pool's tensor-parallel degree and
 * whether its engine schedules asynchronously: how the engine's host time per vLLM release is added
 * to the GPU's step ({@code io.blis.engine.host.HostBoundModel}).
 */
@FunctionalInterface
public interface StepDecorator {

  /**
   * The model the pool's scheduler uses in place of {@code model}.
   *
   * @param model the latency model the provider created
   * @param tensorParallel the pool's tensor-parallel degree
   * @param asyncScheduling whether the engine forms the next step while this one runs
   */
  LatencyModel decorate(LatencyModel model, int tensorParallel, boolean asyncScheduling);
}
