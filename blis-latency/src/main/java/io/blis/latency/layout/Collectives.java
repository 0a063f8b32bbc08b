package io.blis.latency.layout;

import io.blis.api.HardwareSpec;

/**
 * The traffic of the collectives a layout runs each step, in bytes one GPU sends, and the time of
 * such traffic over the links of a {@link HardwareSpec}. The formulas are the standard ones:
 *
 * <ul>
 *   <li>ring all-reduce of {@code B} bytes over {@code n} GPUs: each sends {@code 2 (n - 1) / n x
 *       B} (a reduce-scatter and an all-gather);
 *   <li>expert-parallel dispatch (or combine) of {@code t} tokens per GPU, each to {@code k}
 *       experts spread uniformly over {@code ep} GPUs, of {@code h}-element hidden vectors: {@code t
 *       k h b (ep - 1) / ep} bytes leave the GPU (the share of expert slots held elsewhere);
 *   <li>pipeline-parallel hand-over between two stages of {@code t} tokens: the hidden states and
 *       the residual, {@code 2 t h b} bytes, split over the {@code tp} GPUs of the stage;
 *   <li>the pipeline bubble (GPipe): with {@code p} stages and {@code m} batches in flight, the
 *       stages idle {@code (p - 1) / (m + p - 1)} of the time.
 * </ul>
 */
public final class Collectives {

  private Collectives() {}

  /** Bytes one GPU sends in a ring all-reduce of {@code bytes} over {@code n} GPUs. */
  public static double ringAllReduceBytes(double bytes, int n) {
    return n > 1 ? bytes * 2.0 * (n - 1) / n : 0.0;
  }

  /**
   * Bytes one GPU sends to dispatch {@code tokens} tokens to their {@code k} experts over {@code
   * ep} GPUs (the combine sends as many back).
   */
  public static double allToAllBytes(double tokens, int k, int hidden, int activationBytes, int ep) {
    return ep > 1 ? tokens * k * hidden * activationBytes * (ep - 1.0) / ep : 0.0;
  }

  /** Bytes one GPU of a stage sends to the next stage for {@code tokens} tokens. */
  public static double stageHandOverBytes(double tokens, int hidden, int activationBytes, int tp) {
    return 2.0 * tokens * hidden * activationBytes / tp;
  }

  /** Idle fraction of a pipeline of {@code stages} stages with {@code inFlight} batches in flight. */
  public static double pipelineBubble(int stages, int inFlight) {
    if (stages < 1 || inFlight < 1) {
      throw new IllegalArgumentException("stages and batches in flight must be at least 1, got "
          + stages + " and " + inFlight);
    }
    return (stages - 1.0) / (inFlight + stages - 1.0);
  }

  /**
   * Microseconds to send {@code bytes} at peak link rates, over the node's link or, when {@code
   * acrossNodes}, over the inter-node network (a ring or a point-to-point transfer).
   */
  public static double transferUs(HardwareSpec gpu, boolean acrossNodes, double bytes) {
    double bytesPerS = acrossNodes ? gpu.interNodeBandwidthBytesPerS() : gpu.interconnectBandwidthBytesPerS();
    return bytes / (bytesPerS / 1e6);
  }

  /**
   * Microseconds for one GPU to send {@code bytes} to the other GPUs of a group of {@code group}:
   * within one node over its link; over more than a node, the share bound for other nodes ({@link
   * #remoteShare}) over the network beside the rest over the link, the slower setting the time.
   */
  public static double allToAllUs(HardwareSpec gpu, int group, double bytes) {
    if (!Layout.crossesNodes(gpu, group)) {
      return transferUs(gpu, false, bytes);
    }
    double remote = remoteShare(gpu, group);
    return Math.max(transferUs(gpu, false, bytes * (1 - remote)), transferUs(gpu, true, bytes * remote));
  }

  /** Latency of one transfer, over the node's link or across nodes, microseconds. */
  public static double latencyUs(HardwareSpec gpu, boolean acrossNodes) {
    return (acrossNodes ? gpu.interNodeLatencyS() : gpu.interconnectLatencyS()) * 1e6;
  }

  /**
   * Share of the bytes one GPU sends to the others of a group of {@code group} that leave its
   * node: of the {@code group - 1} other GPUs, those beyond the sender's node.
   */
  public static double remoteShare(HardwareSpec gpu, int group) {
    if (!Layout.crossesNodes(gpu, group)) {
      return 0.0;
    }
    int g = gpu.gpusPerNode();
    return (double) (group - g) / (group - 1);
  }
}
