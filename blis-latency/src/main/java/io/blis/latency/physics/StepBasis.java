package io.blis.latency.physics;

import io.blis.api.BatchView;
import io.blis.api.HardwareSpec;
import io.blis.api.ModelSpec;
import io.blis.api.Phase;
import io.blis.api.RequestView;
import io.blis.latency.catalog.GpuSpec;
import io.blis.latency.catalog.ModelConfig;
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
 * HBM ({@code moeRoutingUs}); and, for a model whose default sampling truncates the distribution
 * (top-p/top-k, {@link ModelConfig#truncatedSampling()}), the vocabulary in thousands ({@code
 * kiloVocabSampled}, 0 otherwise), a constant per step like {@code layers}: the batched sort of
 * the logits and the passes around it are a chain of kernels over vocabulary-wide rows, whose
 * launches cost about the same per step whatever the number of rows; and one pass over one
 * request's fp32 logits at peak HBM bandwidth ({@code logitsPassUs}, 0 when sampling does not
 * truncate), the unit of the work those kernels do per row (per request in the step).
 */
final class StepBasis {

  // constants (model x GPU x TP)
  final int layers;
  final int moeLayers;
  final int allReducesPerStep;
  /** Vocabulary / 1000 when the model's default sampling truncates (sorts the logits), else 0. */
  final double kiloVocabSampled;
  /**
   * One read of one request's fp32 logits (vocabulary x 4 bytes) at peak HBM bandwidth, in us,
   * when the model's default sampling truncates, else 0.
   */
  final double logitsPassUs;
  private final int experts;
  private final double missRatio; // (N - k) / N, chance that one token misses a given expert
  // ideal microseconds per unit of work, computed once here (no division per step)
  private final double linearUsPerToken;
  private final double attentionUsPerPair;
  private final double lmHeadUsPerRequest;
  private final double kvUsPerToken;
  private final double denseWeightUs;
  private final double expertUsPerDistinctExpert;
  private final double routingUsPerToken;
  private final double tpCommUsPerToken;

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
    this(m, gpu, tp, ModelConfig.truncatesSampling(m));
  }

  /** As above, with whether sampling truncates given instead of read from the model. */
  StepBasis(ModelSpec m, HardwareSpec gpu, int tp, boolean truncates) {
    ModelSizes.checkTensorParallel(m, tp);
    double d = m.hiddenSize();
    double w = m.weightBytesPerParam();
    int denseLayers = m.numLayers() - (m.isMoe() ? m.numMoeLayers() : 0);
    this.layers = m.numLayers();
    this.moeLayers = m.isMoe() ? m.numMoeLayers() : 0;
    this.allReducesPerStep = tp > 1 ? 2 * layers : 0;
    double flopsPerUs = GpuSpec.peakFlopsFor(gpu, w) / 1e6;
    double hbmBytesPerUs = gpu.memoryBandwidthBytesPerS() / 1e6;
    double linkBytesPerUs = gpu.interconnectBandwidthBytesPerS() / 1e6;

    double attnParams = ModelSizes.attentionParamsPerLayer(m);
    double denseParams = ModelSizes.denseMlpParamsPerLayer(m);
    double expertParams = m.isMoe() ? ModelSizes.expertParams(m) : 0;
    double sharedParams = m.isMoe() ? ModelSizes.sharedExpertParamsPerLayer(m) : 0;
    double routerParams = m.isMoe() ? d * m.numExperts() : 0;
    int k = m.isMoe() ? m.expertsPerToken() : 0;

    double linearFlopsPerToken =
        2.0 * (layers * attnParams + denseLayers * denseParams
                + moeLayers * (k * expertParams + sharedParams)) / tp
            + 2.0 * moeLayers * routerParams;
    double attentionFlopsPerPair = 4.0 * layers * ((double) m.numAttentionHeads() / tp) * m.headDim();
    double lmHeadFlopsPerRequest = 2.0 * d * m.vocabSize() / tp;
    double kvBytesPerToken = ModelSizes.kvBytesPerTokenPerGpu(m, tp);
    double lmHead = (double) m.vocabSize() * d;
    double norms = layers * 2.0 * d + d;
    double denseWeightBytes =
        w * ((layers * attnParams + denseLayers * denseParams
                    + moeLayers * (sharedParams + routerParams) + lmHead) / tp + norms);
    this.experts = m.isMoe() ? m.numExperts() : 0;
    double expertBytesPerMoeLayerPerExpert = w * expertParams / tp;
    this.missRatio = m.isMoe() ? (double) (m.numExperts() - k) / m.numExperts() : 1.0;
    double allReduceBytesPerToken =
        tp > 1 ? d * m.activationBytes() * 2.0 * (tp - 1) / tp : 0.0;
    double routingBytesPerToken = 4.0 * k * d * m.activationBytes();
    this.linearUsPerToken = linearFlopsPerToken / flopsPerUs;
    this.attentionUsPerPair = attentionFlopsPerPair / flopsPerUs;
    this.lmHeadUsPerRequest = lmHeadFlopsPerRequest / flopsPerUs;
    this.kvUsPerToken = kvBytesPerToken / hbmBytesPerUs;
    this.denseWeightUs = denseWeightBytes / hbmBytesPerUs;
    this.expertUsPerDistinctExpert = moeLayers * expertBytesPerMoeLayerPerExpert / hbmBytesPerUs;
    this.routingUsPerToken = moeLayers * routingBytesPerToken / hbmBytesPerUs;
    this.tpCommUsPerToken = allReducesPerStep * allReduceBytesPerToken / linkBytesPerUs;
    this.kiloVocabSampled = truncates ? m.vocabSize() / 1000.0 : 0.0;
    this.logitsPassUs = truncates ? m.vocabSize() * 4.0 / hbmBytesPerUs : 0.0;
  }

  /** Computes every term for {@code batch}; the results are left in the fields. */
  void compute(BatchView batch) {
    // exact integer sums; one pass, no allocation
    long pfTokens = 0;
    long pfPairs = 0;
    long pfContext = 0;
    int pfRequests = 0;
    long dcTokens = 0;
    long dcPairs = 0;
    long dcContext = 0;
    int n = batch.size();
    for (int i = 0; i < n; i++) {
      RequestView r = batch.get(i);
      long t = r.newTokens();
      long s = r.progressIndex();
      long pairs = t * s + (t * (t + 1) >> 1);
      if (r.phase() == Phase.PREFILL) {
        pfTokens += t;
        pfPairs += pairs;
        pfContext += s;
        pfRequests++;
      } else {
        dcTokens += t;
        dcPairs += pairs;
        dcContext += s;
      }
    }
    double total = pfTokens + dcTokens;
    requests = n;
    tokens = pfTokens + dcTokens;
    prefillComputeUs =
        pfTokens * linearUsPerToken + pfPairs * attentionUsPerPair + pfRequests * lmHeadUsPerRequest;
    decodeComputeUs =
        dcTokens * linearUsPerToken + dcPairs * attentionUsPerPair
            + (n - pfRequests) * lmHeadUsPerRequest;
    prefillMemoryUs = (pfContext + pfTokens) * kvUsPerToken;
    decodeMemoryUs = (dcContext + dcTokens) * kvUsPerToken;
    weightLoadUs = denseWeightUs;
    if (experts > 0) {
      expertWeightLoadUs = experts * (1.0 - Math.pow(missRatio, total)) * expertUsPerDistinctExpert;
      moeRoutingUs = total * routingUsPerToken;
    } else {
      expertWeightLoadUs = 0;
      moeRoutingUs = 0;
    }
    tpCommUs = total * tpCommUsPerToken;
  }
}
