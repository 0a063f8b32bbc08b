package io.blis.engine.result;

import java.util.List;

/**
 * What an autoscaled pool did over a run and what it cost.
 *
 * @param scaler the autoscaler's name
 * @param timeline the replicas at every scaling tick (and at the start and the end)
 * @param nodeHours hours of nodes held, from asking for each to releasing it
 * @param gpuHours {@code nodeHours} x GPUs per node: the GPU time paid for
 * @param replicaGpuHours GPU hours held by replicas (starting, ready or draining)
 * @param cost {@code nodeHours} x the node's price per hour
 * @param peakReplicas the most replicas held at once (ready or starting)
 * @param peakNodes the most nodes held at once
 * @param scaleUps ticks that raised the desired replicas
 * @param scaleDowns ticks that lowered them
 * @param arrivalsWhileShort requests that arrived while fewer replicas were ready than desired
 * @param hours per hour of arrival: requests finished, completed, and completed within their SLO
 *     class's targets
 * @param pools with several autoscaled pools, each pool's own report by its name, in the cluster's
 *     order (this report is then their sum: the timeline adds their replicas and nodes, the hours
 *     count every request once, a pool's hours the requests that ended on its instances); empty
 *     with one pool
 */
public record AutoscaleReport(String scaler, List<Sample> timeline, double nodeHours, double gpuHours,
    double replicaGpuHours, double cost, int peakReplicas, int peakNodes, long scaleUps, long scaleDowns,
    long arrivalsWhileShort, List<Hour> hours, java.util.Map<String, AutoscaleReport> pools) {

  /** The report of one autoscaled pool. */
  public AutoscaleReport(String scaler, List<Sample> timeline, double nodeHours, double gpuHours,
      double replicaGpuHours, double cost, int peakReplicas, int peakNodes, long scaleUps, long scaleDowns,
      long arrivalsWhileShort, List<Hour> hours) {
    this(scaler, timeline, nodeHours, gpuHours, replicaGpuHours, cost, peakReplicas, peakNodes, scaleUps,
        scaleDowns, arrivalsWhileShort, hours, java.util.Map.of());
  }

  /** The pool at one moment. */
  public record Sample(long atUs, int desired, int ready, int starting, int draining, int nodes) {}

  /** The requests that arrived in one hour of the run. */
  public record Hour(int hour, long finished, long completed, long metSlo) {
    /** Completed within targets over finished (rejected and timed out count as missed); NaN when none. */
    public double attainment() {
      return finished == 0 ? Double.NaN : (double) metSlo / finished;
    }
  }

  public AutoscaleReport {
    timeline = List.copyOf(timeline);
    hours = List.copyOf(hours);
    pools = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(pools));
  }

  /** Met over finished over the whole run; NaN when nothing finished. */
  public double attainment() {
    long f = 0;
    long m = 0;
    for (Hour h : hours) {
      f += h.finished();
      m += h.metSlo();
    }
    return f == 0 ? Double.NaN : (double) m / f;
  }
}
