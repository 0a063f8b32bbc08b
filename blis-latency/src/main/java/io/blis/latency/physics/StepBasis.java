package io.blis.latency.physics;

import io.blis.api.BatchView;
import io.blis.api.HardwareSpec;
import io.blis.api.ModelSpec;
import io.blis.api.Phase;
import io.blis.api.RequestView;
import io.blis.latency.catalog.GpuSpec;
import io.blis.latency.catalog.ModelSizes;

/**
 * The physically derived cost terms of one engine step, for one model on one GPU type at one
 * tensor-parallel degree: ideal times in microseconds at the GPU's PEAK rates (dense FLOP/s, HBM
 * bytes/s, interconnect bytes/s), per GPU of the tensor-parallel group.
 *
 * <p>Everything that depends only on model, GPU and TP is computed in the constructor; {@link
 * #compute(BatchView)} loops once over the batch with primitive arithmetic, allocates nothing, and
 * leaves the terms in fields. Not thread-safe (one instance per simulated engine instance).
 *
 * <p>Per request of the batch, with {@code t = newTokens} and {@code s = progressIndex} (tokens
 * whose KV is already computed, prefix-cache hits included):
 *
 * <ul>
 *   <li>linear FLOPs: {@code t x linearFlopsPerToken} (Q/K/V/O projections, dense FFN or top-k
 *       routed experts + shared experts + router; 2 FLOPs per multiply-add, split over TP), plus
 *       the LM head once per request ({@code 2 d V / TP}, the logits of its last token);
 *   <li>attention FLOPs: {@code 4 x layers x heads/TP x head_dim} per (query, key) pair, with
 *       {@code t s + t (t + 1) / 2} causal pairs;
 *   <li>KV bytes: {@code (s + t) x kvBytesPerTokenPerGpu} (reads the context, writes the new
 *       tokens);
 * </ul>
 *
 * summed separately over requests in the PREFILL phase and in the DECODE phase. Per step: dense
 * weights read once ({@code weightLoadUs}); expert weights of the expected number of distinct
 * experts hit by the step's {@code T} tokens, {@code N (1 - ((N - k) / N)^T)} per MoE layer
 * ({@code expertWeightLoadUs}); two ring all-reduces per layer of {@code T x hidden x activation
 * bytes}, costing {@code 2 (TP - 1) / TP} of that over the interconnect ({@code tpCommUs}); and
 * the MoE dispatch/combine traffic of {@code 4 k d activationBytes} per token per MoE layer over
 * HBM ({@code moeRoutingUs}).
 */
final class StepBasis {

  // constants (model x GPU x TP)
  final int layers;
  final int moeLayers;
  final int allReducesPerStep;
  private final double flopsPerUs;
  private final double hbmBytesPerUs;
  private final double linkBytesPerUs;
  private final double linearFlopsPerToken;
  private final double attentionFlopsPerPair;
  private final double lmHeadFlopsPerRequest;
  private final double kvBytesPerToken;
  private final double denseWeightBytes;
  private final double expertBytesPerMoeLayerPerExpert;
  private final int experts;
  private final double missRatio; // (N - k) / N
  private final double allReduceBytesPerToken;
  private final double routingBytesPerToken;

  // results of the last compute(): ideal microseconds at peak rates
  double prefillComputeUs;
  double prefillMemoryUs;
  double decodeComputeUs;
  double decodeMemoryUs;
  double weightLoadUs;
  double expertWeightLoadUs;
  double tpCommUs;
  double moeRoutingUs;
  int requests;
  long tokens;

  StepBasis(ModelSpec m, HardwareSpec gpu, int tp) {
    ModelSizes.checkTensorParallel(m, tp);
    double d = m.hiddenSize();
    double w = m.weightBytesPerParam();
    int denseLayers = m.numLayers() - (m.isMoe() ? m.numMoeLayers() : 0);
    this.layers = m.numLayers();
    this.moeLayers = m.isMoe() ? m.numMoeLayers() : 0;
    this.allReducesPerStep = tp > 1 ? 2 * layers : 0;
    this.flopsPerUs = GpuSpec.peakFlopsFor(gpu, w) / 1e6;
    this.hbmBytesPerUs = gpu.memoryBandwidthBytesPerS() / 1e6;
    this.linkBytesPerUs = gpu.interconnectBandwidthBytesPerS() / 1e6;

    double attnParams = ModelSizes.attentionParamsPerLayer(m);
    double denseParams = ModelSizes.denseMlpParamsPerLayer(m);
    double expertParams = m.isMoe() ? ModelSizes.expertParams(m) : 0;
    double sharedParams = m.isMoe() ? ModelSizes.sharedExpertParamsPerLayer(m) : 0;
    double routerParams = m.isMoe() ? d * m.numExperts() : 0;
    int k = m.isMoe() ? m.expertsPerToken() : 0;

    this.linearFlopsPerToken =
        2.0 * (layers * attnParams + denseLayers * denseParams
                + moeLayers * (k * expertParams + sharedParams)) / tp
            + 2.0 * moeLayers * routerParams;
    this.attentionFlopsPerPair = 4.0 * layers * ((double) m.numAttentionHeads() / tp) * m.headDim();
    this.lmHeadFlopsPerRequest = 2.0 * d * m.vocabSize() / tp;
    this.kvBytesPerToken = ModelSizes.kvBytesPerTokenPerGpu(m, tp);
    double lmHead = (double) m.vocabSize() * d;
    double norms = layers * 2.0 * d + d;
    this.denseWeightBytes =
        w * ((layers * attnParams + denseLayers * denseParams
                    + moeLayers * (sharedParams + routerParams) + lmHead) / tp + norms);
    this.experts = m.isMoe() ? m.numExperts() : 0;
    this.expertBytesPerMoeLayerPerExpert = w * expertParams / tp;
    this.missRatio = m.isMoe() ? (double) (m.numExperts() - k) / m.numExperts() : 1.0;
    this.allReduceBytesPerToken =
        tp > 1 ? d * m.activationBytes() * 2.0 * (tp - 1) / tp : 0.0;
    this.routingBytesPerToken = 4.0 * k * d * m.activationBytes();
  }

  /** Computes every term for {@code batch}; the results are left in the fields. */
  void compute(BatchView batch) {
    double pfTokens = 0;
    double pfPairs = 0;
    double pfKvTokens = 0;
    int pfRequests = 0;
    double dcTokens = 0;
    double dcPairs = 0;
    double dcKvTokens = 0;
    int n = batch.size();
    for (int i = 0; i < n; i++) {
      RequestView r = batch.get(i);
      double t = r.newTokens();
      double s = r.progressIndex();
      double pairs = t * s + t * (t + 1) * 0.5;
      if (r.phase() == Phase.PREFILL) {
        pfTokens += t;
        pfPairs += pairs;
        pfKvTokens += s + t;
        pfRequests++;
      } else {
        dcTokens += t;
        dcPairs += pairs;
        dcKvTokens += s + t;
      }
    }
    double total = pfTokens + dcTokens;
    requests = n;
    tokens = (long) total;
    prefillComputeUs =
        (pfTokens * linearFlopsPerToken + pfPairs * attentionFlopsPerPair
                + pfRequests * lmHeadFlopsPerRequest) / flopsPerUs;
    decodeComputeUs =
        (dcTokens * linearFlopsPerToken + dcPairs * attentionFlopsPerPair
                + (n - pfRequests) * lmHeadFlopsPerRequest) / flopsPerUs;
    prefillMemoryUs = pfKvTokens * kvBytesPerToken / hbmBytesPerUs;
    decodeMemoryUs = dcKvTokens * kvBytesPerToken / hbmBytesPerUs;
    weightLoadUs = denseWeightBytes / hbmBytesPerUs;
    if (experts > 0) {
      double distinct = experts * (1.0 - Math.pow(missRatio, total));
      expertWeightLoadUs = moeLayers * distinct * expertBytesPerMoeLayerPerExpert / hbmBytesPerUs;
      moeRoutingUs = moeLayers * total * routingBytesPerToken / hbmBytesPerUs;
    } else {
      expertWeightLoadUs = 0;
      moeRoutingUs = 0;
    }
    tpCommUs = allReducesPerStep * total * allReduceBytesPerToken / linkBytesPerUs;
  }
}
