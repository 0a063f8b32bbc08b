package io.blis.engine.host;

import io.blis.api.BatchView;
import io.blis.api.LatencyModel;
import io.blis.latency.ForwardingLatencyModel;

/**
 * A latency model whose steps also wait for the engine's host time ({@link HostTime}): the GPU
 * model's step time plus the host time when the engine schedules synchronously, the larger of the
 * two when it schedules the next step while the GPU runs this one. Every other time is the GPU
 * model's.
 */
public final class HostBoundModel extends ForwardingLatencyModel {

  private final HostTime host;
  private final int tp;
  private final int schedulerSteps;
  private final boolean async;

  /**
   * @param gpu the model of the GPU's step
   * @param host the release's host time
   * @param tp tensor-parallel ranks
   * @param schedulerSteps decode steps scheduled at once (1 but with multi-step scheduling)
   * @param async whether the next step is scheduled while the GPU runs this one
   */
  public HostBoundModel(LatencyModel gpu, HostTime host, int tp, int schedulerSteps, boolean async) {
    super(gpu);
    if (tp < 1 || schedulerSteps < 1) {
      throw new IllegalArgumentException("tp and scheduler steps must be at least 1, got " + tp + " and "
          + schedulerSteps);
    }
    this.host = host;
    this.tp = tp;
    this.schedulerSteps = schedulerSteps;
    this.async = async;
  }

  @Override
  public long stepTime(BatchView batch) {
    long g = delegate().stepTime(batch);
    long h = Math.round(host.of(batch.size(), tp) / schedulerSteps);
    return async ? Math.max(g, h) : g + h;
  }
}
