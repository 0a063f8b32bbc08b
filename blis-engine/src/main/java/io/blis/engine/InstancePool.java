package io.blis.engine;

import io.blis.api.LatencyModel;
import io.blis.kvcache.OffloadTiers;
import io.blis.kvcache.ResidentBlocks;
import java.util.Objects;
import java.util.function.IntFunction;

/**
 * A pool of identical serving instances of a (possibly heterogeneous) cluster: each pool has its
 * own latency model (so its own model, GPU and TP), vLLM limits and KV cache.
 *
 * @param name pool name, shown in per-instance results and to routers ({@code InstanceSnapshot#pool})
 * @param instances number of instances, at least 1
 * @param latencyModels creates the latency model of the pool's i-th instance (from 0)
 * @param limits vLLM limits of each instance
 * @param totalKvBlocks GPU KV blocks of each instance
 * @param blockSizeTokens tokens per KV block
 * @param cpuKvBlocks blocks of each instance's CPU KV tier, 0 for none
 * @param cpuLoadUsPerBlock time to reload one block from the CPU tier, microseconds (at most {@link
 *     SimulatedTime#MAX_DELAY_US})
 * @param dataParallel data-parallel ranks of each instance, each its own scheduler with {@code
 *     totalKvBlocks} blocks
 * @param pipelineParallel pipeline stages of each instance: each data-parallel rank runs this many
 *     batches in flight, as as many schedulers (vLLM's virtual engines) sharing its blocks equally
 * @param lockstep whether the data-parallel ranks step together (an MoE model: see {@link
 *     StepGate})
 * @param offloadTiers secondary offload tiers behind each instance's CPU tier ({@link
 *     OffloadTiers#NONE} for none; they need a CPU tier)
 * @param resident the blocks every request holds besides its tokens' (a hybrid model's recurrent
 *     states and sliding windows; {@link ResidentBlocks#NONE} for a transformer)
 */
public record InstancePool(String name, int instances, IntFunction<LatencyModel> latencyModels,
    EngineLimits limits, long totalKvBlocks, int blockSizeTokens, long cpuKvBlocks,
    double cpuLoadUsPerBlock, int dataParallel, int pipelineParallel, boolean lockstep,
    OffloadTiers offloadTiers, ResidentBlocks resident) {

  /** A pool whose requests hold only their tokens' blocks. */
  public InstancePool(String name, int instances, IntFunction<LatencyModel> latencyModels,
      EngineLimits limits, long totalKvBlocks, int blockSizeTokens, long cpuKvBlocks,
      double cpuLoadUsPerBlock, int dataParallel, int pipelineParallel, boolean lockstep,
      OffloadTiers offloadTiers) {
    this(name, instances, latencyModels, limits, totalKvBlocks, blockSizeTokens, cpuKvBlocks, cpuLoadUsPerBlock,
        dataParallel, pipelineParallel, lockstep, offloadTiers, ResidentBlocks.NONE);
  }

  /** A pool without secondary offload tiers. */
  public InstancePool(String name, int instances, IntFunction<LatencyModel> latencyModels,
      EngineLimits limits, long totalKvBlocks, int blockSizeTokens, long cpuKvBlocks,
      double cpuLoadUsPerBlock, int dataParallel, int pipelineParallel, boolean lockstep) {
    this(name, instances, latencyModels, limits, totalKvBlocks, blockSizeTokens, cpuKvBlocks, cpuLoadUsPerBlock,
        dataParallel, pipelineParallel, lockstep, OffloadTiers.NONE);
  }

  /** A pool of single-scheduler instances. */
  public InstancePool(String name, int instances, IntFunction<LatencyModel> latencyModels,
      EngineLimits limits, long totalKvBlocks, int blockSizeTokens, long cpuKvBlocks,
      double cpuLoadUsPerBlock) {
    this(name, instances, latencyModels, limits, totalKvBlocks, blockSizeTokens, cpuKvBlocks,
        cpuLoadUsPerBlock, 1, 1, false, OffloadTiers.NONE);
  }

  public InstancePool {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(latencyModels, "latencyModels");
    Objects.requireNonNull(limits, "limits");
    Objects.requireNonNull(offloadTiers, "offloadTiers");
    Objects.requireNonNull(resident, "resident");
    if (instances < 1) {
      throw new IllegalArgumentException("pool '" + name + "': instances must be at least 1, got " + instances);
    }
    if (totalKvBlocks < 1) {
      throw new IllegalArgumentException("pool '" + name + "': total KV blocks must be at least 1, got " + totalKvBlocks);
    }
    if (blockSizeTokens < 1) {
      throw new IllegalArgumentException("pool '" + name + "': block size must be at least 1 token, got " + blockSizeTokens);
    }
    if (dataParallel < 1 || pipelineParallel < 1) {
      throw new IllegalArgumentException("pool '" + name + "': data- and pipeline-parallel degrees must be at"
          + " least 1, got " + dataParallel + " and " + pipelineParallel);
    }
    if (totalKvBlocks < pipelineParallel) {
      throw new IllegalArgumentException("pool '" + name + "': " + totalKvBlocks + " KV blocks cannot be shared by "
          + pipelineParallel + " pipeline batches in flight");
    }
    if (cpuKvBlocks < 0 || !(cpuLoadUsPerBlock >= 0 && cpuLoadUsPerBlock <= SimulatedTime.MAX_DELAY_US)) {
      throw new IllegalArgumentException("pool '" + name + "': CPU KV tier needs blocks >= 0 and a load time per"
          + " block between 0 and " + SimulatedTime.MAX_DELAY_US + " us (one hour), got " + cpuKvBlocks + " and "
          + cpuLoadUsPerBlock);
    }
    if ((offloadTiers.any() || offloadTiers.generatedBlocks()) && cpuKvBlocks < pipelineParallel) {
      throw new IllegalArgumentException("pool '" + name + "': secondary offload tiers and offloaded generated blocks need a CPU KV tier in front"
          + " of them");
    }
  }

  /**
   * The blocks a request holds besides its tokens' under vLLM's hybrid KV-cache manager laid out as
   * {@code h} says: its recurrent groups' states and its sliding-window groups' windows; none for a
   * transformer whose every layer attends to the whole context.
   */
  public static ResidentBlocks residentBlocks(io.blis.latency.kv.HybridKv h) {
    return h.hybrid() ? new ResidentBlocks(h.recurrentGroups(), h.slidingGroups(), h.windowBlocks())
        : ResidentBlocks.NONE;
  }

  /** Schedulers of each instance: {@code dataParallel x pipelineParallel}. */
  public int ranks() {
    return dataParallel * pipelineParallel;
  }

  /** A pool without a CPU KV tier. */
  public static InstancePool of(String name, int instances, IntFunction<LatencyModel> latencyModels,
      EngineLimits limits, long totalKvBlocks, int blockSizeTokens) {
    return new InstancePool(name, instances, latencyModels, limits, totalKvBlocks, blockSizeTokens, 0, 0);
  }
}
