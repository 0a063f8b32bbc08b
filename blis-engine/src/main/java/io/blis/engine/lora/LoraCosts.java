package io.blis.engine.lora;

import io.blis.api.HardwareSpec;
import io.blis.api.ModelSpec;
import io.blis.latency.lora.LoraSizes;
import java.util.HashMap;
import java.util.Map;

/**
 * What LoRA adapters cost on one pool's instances (its model, GPU and tensor-parallel degree):
 * the memory its slots reserve, each adapter's load times, and the extra time of a step.
 *
 * <p>Loading follows vLLM's worker: an adapter a step needs that is not on the GPU is copied into
 * a slot ({@link #activateUs}: one host-to-device copy per tensor, at the host-to-GPU bandwidth),
 * after its checkpoint is read into host memory when it is not there ({@link #diskLoadUs}); both
 * happen before the step's forward pass, so they lengthen that step for every request in it.
 */
public final class LoraCosts {

  private final LoraSpec spec;
  private final ModelSpec model;
  private final HardwareSpec gpu;
  private final int tp;
  private final int layers;
  private final int dtypeBytes;
  private final long reservedBytesPerGpu;
  private final int tensors;
  /** Per adapter: rank, checkpoint read microseconds, slot copy microseconds. */
  private final Map<String, long[]> byName = new HashMap<>();

  private LoraCosts(LoraSpec spec, ModelSpec model, HardwareSpec gpu, int tp, int layers) {
    this.spec = spec;
    this.model = model;
    this.gpu = gpu;
    this.tp = tp;
    this.layers = layers;
    this.dtypeBytes = Math.max(1, model.activationBytes());
    long slot = spec.footprintBytesPerRank() != null
        ? (long) Math.ceil(spec.footprintBytesPerRank() * spec.maxLoraRank() / tp)
        : LoraSizes.slotBytesPerGpu(model, tp, spec.maxLoraRank(), dtypeBytes);
    long reserved;
    try {
      reserved = Math.multiplyExact(slot, (long) spec.maxLoras());
    } catch (ArithmeticException e) {
      reserved = Long.MAX_VALUE; // more than any GPU has: the KV cache sizing says the slots do not fit
    }
    this.reservedBytesPerGpu = reserved;
    this.tensors = LoraSizes.slotTensors(model);
  }

  /**
   * The costs on instances of {@code model} on {@code gpu} at tensor parallelism {@code tp}.
   *
   * @param layers the layers one GPU runs (the model's, or one pipeline stage's)
   */
  public static LoraCosts of(LoraSpec spec, ModelSpec model, HardwareSpec gpu, int tp, int layers) {
    if (tp < 1 || layers < 1) {
      throw new IllegalArgumentException("LoRA costs: tp and layers must be >= 1, got " + tp + " and " + layers);
    }
    return new LoraCosts(spec, model, gpu, tp, layers);
  }

  public LoraSpec spec() {
    return spec;
  }

  /** Bytes each GPU reserves for the {@code max_loras} slots before the KV cache is sized. */
  public long reservedBytesPerGpu() {
    return reservedBytesPerGpu;
  }

  /** Whether instances serve {@code adapter}: the registry lists it, or there is no registry. */
  public boolean serves(String adapter) {
    return spec.adapters().isEmpty() || spec.adapters().containsKey(adapter);
  }

  /** Bytes of {@code adapter}'s checkpoint. */
  public long adapterBytes(String adapter) {
    LoraSpec.Adapter a = spec.adapter(adapter);
    return spec.footprintBytesPerRank() != null ? (long) Math.ceil(spec.footprintBytesPerRank() * a.rank())
        : LoraSizes.adapterBytes(model, a.rank(), a.targets(), dtypeBytes);
  }

  /** Bytes of {@code adapter} one GPU holds in its slot. */
  public long adapterBytesPerGpu(String adapter) {
    LoraSpec.Adapter a = spec.adapter(adapter);
    return spec.footprintBytesPerRank() != null ? (long) Math.ceil(spec.footprintBytesPerRank() * a.rank() / tp)
        : LoraSizes.adapterBytesPerGpu(model, tp, a.rank(), a.targets(), dtypeBytes);
  }

  private long[] costs(String adapter) {
    long[] c = byName.get(adapter);
    if (c == null) {
      LoraSpec.Adapter a = spec.adapter(adapter);
      long disk = Math.max(1, Math.round(spec.diskLatencyUs() + adapterBytes(adapter) / (spec.diskGbPerS() * 1e3)));
      long copy = Math.max(1, Math.round(tensors * spec.copyLatencyUs()
          + adapterBytesPerGpu(adapter) / (spec.hostToGpuGbPerS() * 1e3)));
      c = new long[] {a.rank(), disk, copy};
      byName.put(adapter, c);
    }
    return c;
  }

  /** {@return the rank of {@code adapter}} */
  public int rank(String adapter) {
    return (int) costs(adapter)[0];
  }

  /** Microseconds to read {@code adapter}'s checkpoint into host memory. */
  public long diskLoadUs(String adapter) {
    return costs(adapter)[1];
  }

  /** Microseconds to copy {@code adapter} from host memory into a GPU slot. */
  public long activateUs(String adapter) {
    return costs(adapter)[2];
  }

  /**
   * Extra microseconds of a step of {@code baseUs} whose distinct adapters have ranks {@code
   * ranks[0..n)} and {@code tokens[0..n)} tokens each: the Punica kernels' time ({@link
   * LoraSizes#stepOverheadUs}), or Go BLIS's factor when the spec gives overhead tiers.
   */
  public long stepOverheadUs(long baseUs, int[] ranks, int[] tokens, int n) {
    if (n == 0) {
      return 0;
    }
    if (!spec.overheadTiers().isEmpty()) {
      int maxRank = 0;
      for (int i = 0; i < n; i++) {
        maxRank = Math.max(maxRank, ranks[i]);
      }
      // the tier of the highest rank, or the nearest one: the next above, else the highest
      java.util.SortedMap<Integer, double[]> above = spec.overheadTiers().tailMap(maxRank);
      double[] k = above.isEmpty() ? spec.overheadTiers().get(spec.overheadTiers().lastKey())
          : above.get(above.firstKey());
      return Math.round(baseUs * k[0] / k[1] * n);
    }
    return Math.round(LoraSizes.stepOverheadUs(model, gpu, tp, layers, ranks, tokens, n, dtypeBytes));
  }
}
