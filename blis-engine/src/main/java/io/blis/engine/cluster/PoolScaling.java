package io.blis.engine.cluster;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * A pool's own autoscaling settings in a policy bundle (its {@code min_replicas}, {@code
 * max_replicas} and {@code autoscaler} keys), applied when the run is autoscaled: every pool is
 * then scaled on its own, by the run's autoscaler unless the pool names another, between these
 * bounds (the run's where null), starting from the pool's {@code instances}.
 *
 * @param minReplicas fewest replicas, or null for the run's
 * @param maxReplicas most replicas, or null for the run's
 * @param autoscaler the pool's own autoscaler's name, or null for the run's
 * @param options parameters of the pool's autoscaler, over the run's when it is the same one
 */
public record PoolScaling(Integer minReplicas, Integer maxReplicas, String autoscaler, Map<String, String> options) {

  public PoolScaling {
    options = Collections.unmodifiableMap(new TreeMap<>(options));
    if (minReplicas != null && minReplicas < 1) {
      throw new IllegalArgumentException("min_replicas must be at least 1, got " + minReplicas);
    }
    if (minReplicas != null && maxReplicas != null && maxReplicas < minReplicas) {
      throw new IllegalArgumentException("max_replicas (" + maxReplicas + ") must be at least min_replicas ("
          + minReplicas + ")");
    }
  }

  /** The settings of a pool that sets none. */
  public static PoolScaling none() {
    return new PoolScaling(null, null, null, Map.of());
  }

  /**
   * The autoscaler this pool runs: its own, with its parameters; or the run's {@code base} with the
   * pool's parameters over the run's.
   */
  public PolicySpec over(PolicySpec base) {
    if (autoscaler != null && !autoscaler.equals(base.name())) {
      return new PolicySpec(autoscaler, options);
    }
    Map<String, String> merged = new TreeMap<>(base.params());
    merged.putAll(options);
    return new PolicySpec(base.name(), merged);
  }
}
