package io.blis.engine.result;

import java.util.Map;
import java.util.TreeMap;

/**
 * What serving LoRA adapters did over a run, summed over the instances.
 *
 * @param maxLoras GPU slots per instance
 * @param maxCpuLoras adapters per instance in host memory
 * @param maxLoraRank the rank each slot is sized for
 * @param reservedBytesPerGpu memory each GPU reserved for the slots (the largest over pools)
 * @param gpuLoads adapters copied into GPU slots
 * @param checkpointReads adapter checkpoints read into host memory
 * @param gpuEvictions adapters dropped from GPU slots
 * @param cpuEvictions checkpoints dropped from host memory
 * @param loadMs step time spent loading adapters, milliseconds (summed over instances)
 * @param kernelMs step time spent in the adapters' kernels, milliseconds (summed over instances)
 * @param stepsWithAdapters steps that used at least one adapter
 * @param passedOver requests a scheduler passed over at least once because their step already used
 *     {@code max_loras} adapters
 * @param peakResident most adapters one instance held on its GPUs at once
 * @param adapters per adapter, by name
 */
public record LoraReport(int maxLoras, int maxCpuLoras, int maxLoraRank, long reservedBytesPerGpu, long gpuLoads,
    long checkpointReads, long gpuEvictions, long cpuEvictions, double loadMs, double kernelMs,
    long stepsWithAdapters, long passedOver, int peakResident, Map<String, Adapter> adapters) {

  public LoraReport {
    adapters = java.util.Collections.unmodifiableMap(new TreeMap<>(adapters));
  }

  /**
   * One adapter.
   *
   * @param gpuLoads times it was copied into a GPU slot
   * @param checkpointReads times its checkpoint was read into host memory
   * @param metrics its requests' metrics
   */
  public record Adapter(long gpuLoads, long checkpointReads, MetricsSummary metrics) {}
}
