package io.blis.engine.cluster;

import java.util.Map;

/**
 * The autoscaling settings of a Go BLIS policy config ({@code autoscaler:}, {@code node_pools:},
 * {@code instance_lifecycle:}), in this project's units; null where the file does not set them.
 * Go BLIS's zero values are kept as it reads them: an absent stabilization window is 0, an
 * {@code interval_us} of 0 leaves the autoscaler off.
 *
 * @param intervalUs {@code autoscaler.interval_us}; 0 or null: no autoscaler
 * @param scaleUpWindowUs {@code autoscaler.scale_up_stabilization_window_us}
 * @param scaleDownWindowUs {@code autoscaler.scale_down_stabilization_window_us}
 * @param analyzer {@code autoscaler.analyzer} as the {@code wva} autoscaler's parameters
 * @param gpuType the node pool's {@code gpu_type}
 * @param gpusPerNode the node pool's {@code gpus_per_node}
 * @param initialNodes the node pool's {@code initial_nodes}
 * @param minNodes the node pool's {@code min_nodes}
 * @param maxNodes the node pool's {@code max_nodes}
 * @param provisioningUs the mean of the node pool's {@code provisioning_delay}
 * @param costPerHour the node pool's {@code cost_per_hour}
 * @param loadingUs the mean of {@code instance_lifecycle.loading_delay}
 */
public record GoAutoscaling(Long intervalUs, Long scaleUpWindowUs, Long scaleDownWindowUs,
    Map<String, String> analyzer, String gpuType, Integer gpusPerNode, Integer initialNodes,
    Integer minNodes, Integer maxNodes, Long provisioningUs, Double costPerHour, Long loadingUs) {

  public GoAutoscaling {
    analyzer = analyzer == null ? Map.of() : Map.copyOf(analyzer);
  }

  /** Whether the file turns the autoscaler on ({@code interval_us} above 0). */
  public boolean enabled() {
    return intervalUs != null && intervalUs > 0;
  }
}
