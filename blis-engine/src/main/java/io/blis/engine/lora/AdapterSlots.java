package io.blis.engine.lora;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The LoRA adapters one instance holds, as vLLM's worker keeps them: {@code max_loras} GPU slots
 * and {@code max_cpu_loras} adapters in host memory (those on the GPU among them), each least
 * recently used first out. A checkpoint leaving host memory leaves its GPU slot too.
 *
 * <p>The engine asks, as it launches each step, for the step's distinct adapters ({@link
 * #prepareStep}): those not on the GPU are loaded, evicting the least recently used adapters the
 * step does not use. A step never uses more than {@code max_loras} adapters (the scheduler passes
 * over waiting requests that would exceed it, as vLLM's does), so an instance never holds more.
 */
public final class AdapterSlots {

  private final LoraCosts costs;
  private final int maxLoras;
  private final int maxCpuLoras;
  /** On the GPU, least recently used first. */
  private final LinkedHashMap<String, Boolean> gpu = new LinkedHashMap<>(16, 0.75f, true);
  /** In host memory, least recently used first. */
  private final LinkedHashMap<String, Boolean> cpu = new LinkedHashMap<>(16, 0.75f, true);
  private final Map<String, long[]> loadsByAdapter = new TreeMap<>();
  private int[] ranks = new int[4];

  private long gpuLoads;
  private long diskLoads;
  private long gpuEvictions;
  private long cpuEvictions;
  private long loadUs;
  private long overheadUs;
  private long stepsWithAdapters;
  private long skippedAdmissions;
  private int peakResident;

  public AdapterSlots(LoraCosts costs) {
    this.costs = costs;
    this.maxLoras = costs.spec().maxLoras();
    this.maxCpuLoras = costs.spec().maxCpuLoras();
  }

  public LoraCosts costs() {
    return costs;
  }

  /** {@return the GPU slots: the most adapters a step may use} */
  public int maxLoras() {
    return maxLoras;
  }

  /** Whether {@code adapter} is on the GPU now (without touching its recency). */
  public boolean onGpu(String adapter) {
    return gpu.containsKey(adapter);
  }

  /** {@return the adapters on the GPU now} */
  public int resident() {
    return gpu.size();
  }

  /** {@return the adapter names on the GPU now, least recently used first} */
  public Iterable<String> residentNames() {
    return gpu.keySet();
  }

  /** A waiting request was passed over (for the first time) because its adapter would exceed {@code max_loras} in the step. */
  public void onSkipped() {
    skippedAdmissions++;
  }

  /**
   * Loads the step's distinct adapters {@code names[0..n)} (with {@code tokens[0..n)} tokens each)
   * and returns the step's extra microseconds: their loading plus the adapters' kernels on a step
   * of {@code baseUs}.
   *
   * @throws IllegalStateException when {@code n} exceeds {@code max_loras}
   */
  public long prepareStep(String[] names, int[] tokens, int n, long baseUs) {
    if (n == 0) {
      return 0;
    }
    if (n > maxLoras) {
      throw new IllegalStateException("a step uses " + n + " LoRA adapters, more than max_loras " + maxLoras);
    }
    for (int i = 0; i < n; i++) { // the step's adapters become the most recently used
      if (gpu.get(names[i]) != null) {
        cpu.get(names[i]);
      }
    }
    long us = 0;
    for (int i = 0; i < n; i++) {
      String a = names[i];
      if (gpu.containsKey(a)) {
        continue;
      }
      long[] perAdapter = loadsByAdapter.computeIfAbsent(a, k -> new long[2]);
      if (cpu.get(a) == null) {
        us += costs.diskLoadUs(a);
        diskLoads++;
        perAdapter[1]++;
        if (cpu.size() == maxCpuLoras) {
          evictCpu(names, n);
        }
        cpu.put(a, Boolean.TRUE);
      }
      if (gpu.size() == maxLoras) {
        Iterator<String> it = gpu.keySet().iterator(); // least recently used: never one of this step's
        it.next();
        it.remove();
        gpuEvictions++;
      }
      gpu.put(a, Boolean.TRUE);
      us += costs.activateUs(a);
      gpuLoads++;
      perAdapter[0]++;
    }
    peakResident = Math.max(peakResident, gpu.size());
    loadUs += us;
    if (ranks.length < n) {
      ranks = new int[Math.max(n, 2 * ranks.length)];
    }
    for (int i = 0; i < n; i++) {
      ranks[i] = costs.rank(names[i]);
    }
    long overhead = costs.stepOverheadUs(baseUs, ranks, tokens, n);
    overheadUs += overhead;
    stepsWithAdapters++;
    return us + overhead;
  }

  /** Drops the least recently used checkpoint of host memory that the step does not use. */
  private void evictCpu(String[] names, int n) {
    for (Iterator<String> it = cpu.keySet().iterator(); it.hasNext(); ) {
      String victim = it.next();
      boolean used = false;
      for (int i = 0; i < n && !used; i++) {
        used = names[i].equals(victim);
      }
      if (!used) {
        it.remove();
        cpuEvictions++;
        if (gpu.remove(victim) != null) {
          gpuEvictions++;
        }
        return;
      }
    }
  }

  /** Adapters copied into a GPU slot. */
  public long gpuLoads() {
    return gpuLoads;
  }

  /** Checkpoints read into host memory. */
  public long diskLoads() {
    return diskLoads;
  }

  public long gpuEvictions() {
    return gpuEvictions;
  }

  public long cpuEvictions() {
    return cpuEvictions;
  }

  /** Microseconds of steps spent loading adapters. */
  public long loadUs() {
    return loadUs;
  }

  /** Microseconds of steps spent in the adapters' kernels. */
  public long overheadUs() {
    return overheadUs;
  }

  /** Steps that used at least one adapter. */
  public long stepsWithAdapters() {
    return stepsWithAdapters;
  }

  /** Requests passed over at least once because their step already used {@code max_loras} adapters. */
  public long skippedAdmissions() {
    return skippedAdmissions;
  }

  /** Most adapters on the GPU at once. */
  public int peakResident() {
    return peakResident;
  }

  /** Per adapter: {GPU loads, checkpoint reads}. */
  public Map<String, long[]> loadsByAdapter() {
    return loadsByAdapter;
  }
}
