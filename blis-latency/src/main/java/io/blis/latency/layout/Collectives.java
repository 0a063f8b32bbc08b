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
    return n > 1 ? 2.0 * (n - 1) / n * bytes : 0.0;
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
   * Microseconds to send {@code bytes} within a collective over {@code group} GPUs at peak link
   * rates: within a node over its link, across nodes over the inter-node network. For an
   * all-to-all over more than a node, {@code remoteShare} of the bytes go to other nodes and the two
   * kinds of traffic run side by side (the slower sets the time); otherwise pass 1.
   */
  public static double transferUs(HardwareSpec gpu, int group, double bytes, double remoteShare) {
    if (bytes <= 0) {
      return 0.0;
    }
    double intraPerUs = gpu.interconnectBandwidthBytesPerS() / 1e6;
    if (!Layout.crossesNodes(gpu, group)) {
      return bytes / intraPerUs;
    }
    double interPerUs = gpu.interNodeBandwidthBytesPerS() / 1e6;
    return Math.max(bytes * (1 - remoteShare) / intraPerUs, bytes * remoteShare / interPerUs);
  }

  /** Latency of one transfer of a collective over {@code group} GPUs, microseconds. */
  public static double latencyUs(HardwareSpec gpu, int group) {
    return (Layout.crossesNodes(gpu, group) ? gpu.interNodeLatencyS() : gpu.interconnectLatencyS()) * 1e6;
  }

  /**
   * Share of an expert-parallel all-to-all's bytes that leave the node: of the {@code ep - 1}
   * other GPUs, those beyond the sender's node.
   */
  public static double remoteShare(HardwareSpec gpu, int ep) {
    if (ep <= 1 || !Layout.crossesNodes(gpu, ep)) {
      return 0.0;
    }
    int g = gpu.gpusPerNode();
    return (double) (ep - g) / (ep - 1);
  }
}
