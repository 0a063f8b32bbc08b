package io.blis.latency.layout;

import io.blis.api.DeploymentSpec;
import io.blis.api.HardwareSpec;
import io.blis.api.ModelSpec;
import io.blis.latency.catalog.ModelSizes;

/**
 * How one instance's GPUs are split, as vLLM splits them: {@code tp} GPUs share every layer
 * (tensor parallel), {@code pp} stages hold consecutive layers (pipeline parallel), {@code dp}
 * ranks each hold a copy of the attention and run their own scheduler (data parallel), and the
 * routed experts of an MoE layer are spread over {@code ep} GPUs as whole experts (expert parallel:
 * {@code tp x dp} when enabled, else 1 and the experts are split tensor-parallel over the same
 * {@code tp x dp} GPUs).
 *
 * <p>GPUs are numbered as vLLM ranks them, tensor-parallel innermost, then pipeline stages, then
 * data-parallel ranks, and fill nodes of {@link HardwareSpec#gpusPerNode()} in order: a group of
 * GPUs wider than a node, or a stage boundary that falls on a node boundary, crosses the
 * inter-node network.
 *
 * @param tp tensor-parallel degree
 * @param pp pipeline-parallel degree
 * @param dp data-parallel degree
 * @param ep expert-parallel degree: 1, or {@code tp x dp}
 */
public record Layout(int tp, int pp, int dp, int ep) {

  /** The most GPUs one instance may span. */
  public static final int MAX_GPUS = 4096;

  public Layout {
    atLeastOne("tensor", tp);
    atLeastOne("pipeline", pp);
    atLeastOne("data", dp);
    atLeastOne("expert", ep);
    if ((long) tp * pp * dp > MAX_GPUS) {
      throw new IllegalArgumentException("tp x pp x dp must be at most " + MAX_GPUS + " GPUs, got "
          + ((long) tp * pp * dp));
    }
    if (ep != 1 && ep != tp * dp) {
      throw new IllegalArgumentException("expert parallelism spreads the experts over the tp x dp = "
          + tp * dp + " GPUs of the instance (as vLLM's --enable-expert-parallel does): ep must be 1 or "
          + tp * dp + ", got " + ep);
    }
  }

  private static void atLeastOne(String kind, int degree) {
    if (degree < 1) {
      throw new IllegalArgumentException(kind + " parallelism must be >= 1, got " + degree);
    }
  }

  /** Tensor parallelism alone. */
  public static Layout tensorParallel(int tp) {
    return new Layout(tp, 1, 1, 1);
  }

  /** The layout a deployment describes. */
  public static Layout of(DeploymentSpec d) {
    return new Layout(d.tensorParallel(), d.pipelineParallel(), d.dataParallel(), d.expertParallel());
  }

  /** GPUs of the instance. */
  public int gpus() {
    return tp * pp * dp;
  }

  /** Whether the experts are spread as whole experts (expert parallel) rather than split. */
  public boolean expertParallel() {
    return ep > 1;
  }

  /** GPUs every MoE layer's experts are divided over: {@code tp x dp}, whether EP or not. */
  public int moeGroup() {
    return tp * dp;
  }

  /** Schedulers of the instance: one per data-parallel rank per pipeline batch in flight. */
  public int ranks() {
    return dp * pp;
  }

  /**
   * Checks that {@code m} can be laid out so, as vLLM requires: attention heads divisible by tp,
   * at least one layer per stage, expert parallelism only for MoE models with experts divisible by
   * ep.
   *
   * @throws IllegalArgumentException naming the model and the count that does not divide
   */
  public void check(ModelSpec m) {
    ModelSizes.checkTensorParallel(m, tp);
    if (pp > m.numLayers()) {
      throw new IllegalArgumentException(m.name() + ": pipeline parallelism " + pp + " exceeds the "
          + m.numLayers() + " layers (every stage needs at least one)");
    }
    if (ep > 1 && !m.isMoe()) {
      throw new IllegalArgumentException(m.name() + ": expert parallelism needs a mixture-of-experts"
          + " model; this one is dense");
    }
    if (ep > 1 && m.numExperts() % ep != 0) {
      throw new IllegalArgumentException(m.name() + ": its " + m.numExperts() + " routed experts cannot"
          + " be spread evenly over expert parallelism " + ep);
    }
  }

  /** Layers of the largest pipeline stage ({@code ceil(layers / pp)}). */
  public int layersPerStage(ModelSpec m) {
    return (m.numLayers() + pp - 1) / pp;
  }

  /** Whether a collective over {@code group} consecutive GPUs leaves one node. */
  public static boolean crossesNodes(HardwareSpec gpu, int group) {
    return group > gpu.gpusPerNode();
  }

  /**
   * Stage boundaries (of the {@code pp - 1}) whose point-to-point transfer crosses nodes: stage
   * {@code s} occupies GPUs {@code [s tp, (s + 1) tp)} of its data-parallel rank, and GPU {@code i}
   * of one stage sends to GPU {@code i} of the next, a node away when {@code tp} fills a node or
   * more, or when {@code (s + 1) tp} starts a node.
   */
  public int stageBoundariesCrossingNodes(HardwareSpec gpu) {
    int g = gpu.gpusPerNode();
    int crossing = 0;
    for (int s = 0; s + 1 < pp; s++) {
      if (tp >= g || ((s + 1) * tp) % g == 0) {
        crossing++;
      }
    }
    return crossing;
  }

  /** {@code tp1}, or {@code tp2 pp2 dp4 ep8}: the degrees above 1 after tp. */
  @Override
  public String toString() {
    StringBuilder b = new StringBuilder("tp").append(tp);
    if (pp > 1) {
      b.append(" pp").append(pp);
    }
    if (dp > 1) {
      b.append(" dp").append(dp);
    }
    if (ep > 1) {
      b.append(" ep").append(ep);
    }
    return b.toString();
  }
}
