package io.blis.latency.physics;

import io.blis.api.BatchView;
import io.blis.api.HardwareSpec;
import io.blis.api.ModelSpec;
import io.blis.api.Phase;
import io.blis.api.RequestView;
import io.blis.latency.catalog.GpuSpec;
import io.blis.latency.catalog.KernelScales;
import io.blis.latency.catalog.ModelConfig;
import io.blis.latency.catalog.ModelSizes;
import io.blis.latency.layout.Collectives;
import io.blis.latency.layout.Layout;

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
 *
 * <p>Multi-head latent attention (DeepSeek-V2/V3, {@link ModelSpec#usesLatentAttention()}): the
 * query, latent down-projection, latent up-projection ({@code kv_lora_rank x heads x (nope + v)})
 * and output matrices replace Q/K/V/O, the two down-projections replicated on every GPU of the TP
 * group as vLLM holds them; prefill attends without absorption ({@code 2 heads (nope + rope + v)}
 * FLOPs per pair and layer) and up-projects the cached latent of its context ({@code 2 x
 * kv_lora_rank x heads x (nope + v)} per context token and layer), decode attends in the latent
 * with the up-projections absorbed ({@code 2 heads (2 kv_lora_rank + rope)} per pair and layer);
 * the KV bytes are the latent's.
 *
 * <p>Under a {@link Layout}: the terms are those of one data-parallel rank's batch passing
 * through every pipeline stage (the stages together do the whole model's work, each on its own
 * GPUs); routed experts are divided over the {@code tp x dp} GPUs of the MoE group and the distinct
 * experts a step touches are those hit by all data-parallel ranks' tokens, every rank assumed to
 * carry a batch like this one ({@code moeRoutingUs} unchanged); expert parallelism adds a dispatch
 * and a combine all-to-all per MoE layer, {@code t k d activationBytes (ep - 1) / ep} bytes each
 * for the {@code t = T / tp} tokens a GPU dispatches ({@code moeCommUs}), and data parallelism
 * without it an all-gather and a reduce-scatter of the other ranks' tokens, {@code 2 (dp - 1) T d
 * activationBytes}; pipeline parallelism hands {@code 2 T d activationBytes / tp} bytes (hidden
 * states and residual) over each of the {@code pp - 1} stage boundaries ({@code ppCommUs}). Links
 * are the node's ({@link HardwareSpec#interconnectBandwidthBytesPerS()}) unless the group spans
 * nodes (the inter-node network, all-to-all traffic split by where its peers are), and each MoE or
 * pipeline transfer adds the link's latency ({@code commLatencyUs}). See {@link Collectives}.
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
  private final double decodeLinearUsPerToken;
  private final double prefillPairUs;
  private final double decodePairUs;
  private final double contextUpUsPerToken;
  private final double lmHeadUsPerRequest;
  private final double decodeLmHeadUsPerRequest;
  private final double kvUsPerToken;
  /** Reading and writing one request's recurrent states (Mamba, linear attention), 0 without them. */
  private final double stateUsPerRequest;
  private final double denseWeightUs;
  private final double expertUsPerDistinctExpert;
  private final double routingUsPerToken;
  private final double tpCommUsPerToken;
  private final double moeCommUsPerToken;
  private final double ppCommUsPerToken;
  private final double commLatencyPerStepUs;
  /** MoE layers x the per-expert fixed time x the GEMM fixed-time scale, over the experts a GPU serves. */
  private final double expertFixedUsPerDistinct;
  /** Data-parallel ranks whose tokens meet in every MoE layer (their batches assumed alike). */
  private final int dataParallel;
  /** Sliding window of the model's sliding-window layers in tokens, 0 when it has none. */
  private final int window;
  /**
   * The sliding layers' share of the attention pair and KV terms (0 without them); the
   * full-attention layers keep the rest.
   */
  private final double slidingShare;

  /**
   * The GPU's kernel scales against the anchor GPU ({@link KernelScales}), applied to the ideal
   * times above; all 1 on the anchor GPU and on a GPU without an efficiency entry.
   */
  final KernelScales scales;
  /** {@link #layers} x the layer-kernel scale: what a fixed time per layer is multiplied by. */
  final double layerUnits;
  /** {@link #allReducesPerStep} x the all-reduce latency scale. */
  final double allReduceUnits;
  /** {@link #moeLayers} x the GEMM fixed-time scale (a fused MoE layer's kernels). */
  final double moeLayerUnits;
  /** {@link #kiloVocabSampled} x the element-wise-kernel scale (the per-step sampling chain). */
  final double kiloVocabUnits;

  /**
   * Fixed time of a fused-MoE layer per distinct expert its tokens hit, in us on the anchor GPU: the
   * thread blocks, alignment and tiles an expert costs whatever its rows. From a joint least-squares
   * fit of two kernel sweeps of the fused-MoE layer (scripts/fused_moe_fit.py): Mixtral-8x7B's shape
   * at TP 2 on H100 (8 large experts, bf16) and Qwen3-235B's at TP 8 on H200 (128 small experts,
   * FP8), where small experts make this part visible; every point within 4.4%.
   */
  static final double PER_DISTINCT_EXPERT_US = 0.35;

  // results of the last compute(): ideal microseconds at peak rates
  double prefillComputeUs;
  double prefillMemoryUs;
  double decodeComputeUs;
  double decodeMemoryUs;
  double weightLoadUs;
  double expertWeightLoadUs;
  double tpCommUs;
  /** Expert-parallel all-to-all, or the data-parallel all-gather of MoE layers, at peak link rates. */
  double moeCommUs;
  /** Pipeline stage hand-overs at peak link rates. */
  double ppCommUs;
  /** Latency of the MoE and pipeline transfers of the step (not of the TP all-reduces). */
  double commLatencyUs;
  double moeRoutingUs;
  /**
   * The fused-MoE layers' fixed time for the distinct experts the step's tokens hit on one GPU
   * ({@link #PER_DISTINCT_EXPERT_US} each per MoE layer, times the GEMM fixed-time scale): a time, not
   * an ideal one, charged as it is.
   */
  double moeExpertFixedUs;
  int requests;
  long tokens;

  StepBasis(ModelSpec m, HardwareSpec gpu, int tp) {
    this(m, gpu, tp, ModelConfig.truncatesSampling(m));
  }

  /** As above, with whether sampling truncates given instead of read from the model. */
  StepBasis(ModelSpec m, HardwareSpec gpu, int tp, boolean truncates) {
    this(m, gpu, Layout.tensorParallel(tp), truncates);
  }

  /** The terms of one data-parallel rank's step through every pipeline stage of {@code layout}. */
  StepBasis(ModelSpec m, HardwareSpec gpu, Layout layout, boolean truncates) {
    this(m, gpu, layout, truncates, true);
  }

  /**
   * As above; {@code kernelScales} false leaves the ideal times at the datasheet peaks (for
   * efficiencies that are already this GPU's own, such as a roofline vector named for it).
   */
  StepBasis(ModelSpec m, HardwareSpec gpu, Layout layout, boolean truncates, boolean kernelScales) {
    layout.check(m);
    int tp = layout.tp();
    double d = m.hiddenSize();
    double w = m.weightBytesPerParam();
    int denseLayers = m.numLayers() - (m.isMoe() ? m.numMoeLayers() : 0);
    this.layers = m.numLayers();
    this.moeLayers = m.isMoe() ? m.numMoeLayers() : 0;
    this.allReducesPerStep = tp > 1 ? 2 * layers : 0;
    this.dataParallel = layout.dp();
    this.window = m.slidingWindowLayers() > 0 ? m.slidingWindow() : 0;
    this.slidingShare = window > 0 ? (double) m.slidingWindowLayers() / m.numLayers() : 0.0;
    KernelScales k8 = kernelScales ? KernelScales.of(gpu, tp, m.hiddenSize()) : KernelScales.ONE;
    this.scales = k8;
    double flopsPerUs = GpuSpec.peakFlopsFor(gpu, w) / 1e6;
    double hbmBytesPerUs = gpu.memoryBandwidthBytesPerS() / 1e6;

    // attention: the parameters every GPU multiplies, as if all were split over TP (MLA's latent
    // down-projections are replicated on every GPU, so they count tp times)
    double attnParams;
    double prefillPairFlops;
    double decodePairFlops;
    double contextUpFlopsPerToken;
    double headsPerGpu = (double) m.numAttentionHeads() / tp;
    if (m.usesLatentAttention()) {
      double rkv = m.kvLoraRank();
      double nope = m.qkNopeHeadDim();
      double rope = m.qkRopeHeadDim();
      double v = m.vHeadDim();
      // the query and latent down-projections and their norms are replicated on every GPU
      double replicated = ModelSizes.mlaReplicatedParamsPerLayer(m);
      double split = ModelSizes.attentionParamsPerLayer(m) - replicated;
      attnParams = replicated * tp + split;
      // prefill (not absorbed): scores over nope + rope dims, values of v dims, per head;
      // decode (absorbed into the latent): scores over kv_lora_rank + rope, values of kv_lora_rank
      prefillPairFlops = 2.0 * layers * headsPerGpu * (nope + rope + v);
      decodePairFlops = 2.0 * layers * headsPerGpu * (2 * rkv + rope);
      // a prefill chunk up-projects the cached latents of the context it attends to
      contextUpFlopsPerToken = 2.0 * layers * ModelSizes.mlaKvUpParamsPerLayer(m) / tp;
    } else {
      attnParams = ModelSizes.attentionParamsPerLayer(m);
      prefillPairFlops = 4.0 * ModelSizes.attentionLayers(m) * headsPerGpu * m.headDim();
      decodePairFlops = prefillPairFlops;
      contextUpFlopsPerToken = 0.0;
    }
    double denseParams = ModelSizes.denseMlpParamsPerLayer(m);
    double expertParams = m.isMoe() ? ModelSizes.expertParams(m) : 0;
    double sharedParams = m.isMoe() ? ModelSizes.sharedExpertParamsPerLayer(m) : 0;
    double routerParams = m.isMoe() ? d * m.numExperts() : 0;
    int k = m.isMoe() ? m.expertsPerToken() : 0;

    // the mixers: attention in the attending layers, the recurrent mixer's projections in the others
    double mixerParams = ModelSizes.mixerParams(m, attnParams);
    double linearFlopsPerToken =
        2.0 * (mixerParams + denseLayers * denseParams
                + moeLayers * (k * expertParams + sharedParams)) / tp
            + 2.0 * moeLayers * routerParams;
    double lmHeadFlopsPerRequest = 2.0 * d * m.vocabSize() / tp;
    double kvBytesPerToken = ModelSizes.kvBytesPerTokenPerGpu(m, tp);
    double lmHead = (double) m.vocabSize() * d;
    double norms = layers * 2.0 * d + d;
    double denseWeightBytes =
        w * ((mixerParams + denseLayers * denseParams
                    + moeLayers * (sharedParams + routerParams) + lmHead) / tp + norms);
    this.experts = m.isMoe() ? m.numExperts() : 0;
    // the experts are divided over the tp x dp GPUs of the MoE group, whole (EP) or split (TP)
    double expertBytesPerMoeLayerPerExpert = m.expertWeightBytesPerParam() * expertParams / layout.moeGroup();
    this.missRatio = m.isMoe() ? (double) (m.numExperts() - k) / m.numExperts() : 1.0;
    double allReduceBytesPerToken = Collectives.ringAllReduceBytes(d * m.activationBytes(), tp);
    double routingBytesPerToken = 4.0 * k * d * m.activationBytes();
    // ideal times at the datasheet peaks, times the GPU's kernel scales (1 on the anchor GPU)
    this.linearUsPerToken = linearFlopsPerToken / flopsPerUs * k8.prefillFlops();
    this.decodeLinearUsPerToken = linearFlopsPerToken / flopsPerUs * k8.decodeFlops();
    this.prefillPairUs = prefillPairFlops / flopsPerUs * k8.prefillFlops();
    this.decodePairUs = decodePairFlops / flopsPerUs * k8.decodeFlops();
    this.contextUpUsPerToken = contextUpFlopsPerToken / flopsPerUs * k8.prefillFlops();
    this.lmHeadUsPerRequest = lmHeadFlopsPerRequest / flopsPerUs * k8.prefillFlops();
    this.decodeLmHeadUsPerRequest = lmHeadFlopsPerRequest / flopsPerUs * k8.decodeFlops();
    this.kvUsPerToken = kvBytesPerToken / hbmBytesPerUs * k8.kv();
    // a recurrent layer reads and writes its state once a step for each request it serves
    this.stateUsPerRequest = 2.0 * ModelSizes.recurrentStateBytes(m) / tp / hbmBytesPerUs * k8.kv();
    this.denseWeightUs = denseWeightBytes / hbmBytesPerUs * k8.weights();
    this.expertUsPerDistinctExpert = moeLayers * expertBytesPerMoeLayerPerExpert / hbmBytesPerUs * k8.weights();
    this.routingUsPerToken = moeLayers * routingBytesPerToken / hbmBytesPerUs * k8.weights();
    this.tpCommUsPerToken = Collectives.transferUs(gpu, Layout.crossesNodes(gpu, tp),
        allReducesPerStep * allReduceBytesPerToken) * k8.allReduceBandwidth();

    // MoE collectives across the group: expert-parallel dispatch and combine (all-to-all), or,
    // without EP but with data-parallel ranks, the all-gather of every rank's tokens and the
    // reduce-scatter of the results
    int group = layout.moeGroup();
    double moeBytesPerToken = 0.0;
    if (moeLayers > 0 && layout.expertParallel()) {
      moeBytesPerToken = 2.0 * moeLayers
          * Collectives.allToAllBytes(1.0 / tp, k, m.hiddenSize(), m.activationBytes(), layout.ep());
    } else if (moeLayers > 0 && layout.dp() > 1) {
      moeBytesPerToken = 2.0 * moeLayers * (layout.dp() - 1) * d * m.activationBytes();
    }
    this.moeCommUsPerToken = Collectives.allToAllUs(gpu, group, moeBytesPerToken);
    double moeLatency = moeBytesPerToken > 0
        ? 2.0 * moeLayers * Collectives.latencyUs(gpu, Layout.crossesNodes(gpu, group)) : 0.0;

    // pipeline stages hand each batch's hidden states and residual to the next
    int crossing = layout.stageBoundariesCrossingNodes(gpu);
    int local = layout.pp() - 1 - crossing;
    double handOver = Collectives.stageHandOverBytes(1.0, m.hiddenSize(), m.activationBytes(), tp);
    this.ppCommUsPerToken = local * Collectives.transferUs(gpu, false, handOver)
        + crossing * Collectives.transferUs(gpu, true, handOver);
    double ppLatency = local * Collectives.latencyUs(gpu, false) + crossing * Collectives.latencyUs(gpu, true);
    this.commLatencyPerStepUs = moeLatency + ppLatency;
    this.kiloVocabSampled = truncates ? m.vocabSize() / 1000.0 : 0.0;
    this.logitsPassUs = truncates ? m.vocabSize() * 4.0 / hbmBytesPerUs * k8.weights() : 0.0;
    this.layerUnits = layers * k8.layer();
    this.allReduceUnits = allReducesPerStep * k8.allReduceLatency();
    this.moeLayerUnits = moeLayers * k8.gemmFixed();
    // under expert parallelism a GPU serves only its share of the distinct experts; split by TP, all
    this.expertFixedUsPerDistinct = moeLayers * PER_DISTINCT_EXPERT_US * k8.gemmFixed()
        / (layout.expertParallel() ? layout.moeGroup() : 1);
    this.kiloVocabUnits = kiloVocabSampled * k8.smallKernels();
  }

  /** Causal (query, key) pairs of {@code t} new tokens after {@code s} cached ones. */
  static long causalPairs(long s, long t) {
    return t * s + (t * (t + 1) >> 1);
  }

  /**
   * Causal (query, key) pairs of {@code t} new tokens after {@code s} cached ones in a layer that
   * attends to at most {@code w} tokens: {@code sum over x in [s + 1, s + t] of min(w, x)}.
   */
  static long windowPairs(long s, long t, long w) {
    if (s + t <= w) {
      return causalPairs(s, t);
    }
    if (s + 1 >= w) {
      return t * w;
    }
    long inside = w - s; // x from s + 1 to w
    return (s + 1 + w) * inside / 2 + (t - inside) * w;
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
      long pairs = causalPairs(s, t);
      if (window > 0) {
        // the sliding layers see at most the window: blend their pairs and context in by share
        long slidePairs = windowPairs(s, t, window);
        pairs = Math.round(pairs * (1 - slidingShare) + slidePairs * slidingShare);
        s = Math.round(s * (1 - slidingShare) + Math.min(s, window) * slidingShare);
      }
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
        pfTokens * linearUsPerToken + pfPairs * prefillPairUs + pfRequests * lmHeadUsPerRequest
            + pfContext * contextUpUsPerToken;
    decodeComputeUs =
        dcTokens * decodeLinearUsPerToken + dcPairs * decodePairUs
            + (n - pfRequests) * decodeLmHeadUsPerRequest;
    prefillMemoryUs = (pfContext + pfTokens) * kvUsPerToken + pfRequests * stateUsPerRequest;
    decodeMemoryUs = (dcContext + dcTokens) * kvUsPerToken + (n - pfRequests) * stateUsPerRequest;
    weightLoadUs = denseWeightUs;
    if (experts > 0) {
      double distinct = total > 0 ? experts * (1.0 - Math.pow(missRatio, total * dataParallel)) : 0;
      expertWeightLoadUs = distinct * expertUsPerDistinctExpert;
      moeExpertFixedUs = distinct * expertFixedUsPerDistinct;
      moeRoutingUs = total * routingUsPerToken;
    } else {
      expertWeightLoadUs = 0;
      moeExpertFixedUs = 0;
      moeRoutingUs = 0;
    }
    tpCommUs = total * tpCommUsPerToken;
    moeCommUs = total * moeCommUsPerToken;
    ppCommUs = total * ppCommUsPerToken;
    commLatencyUs = total > 0 ? commLatencyPerStepUs : 0.0;
  }
}
