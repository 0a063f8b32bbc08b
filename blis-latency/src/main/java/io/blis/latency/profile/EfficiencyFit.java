package io.blis.latency.profile;

import io.blis.api.HardwareSpec;
import io.blis.latency.catalog.GpuEfficiency;
import io.blis.latency.catalog.GpuSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Derives a GPU's {@link GpuEfficiency} from its kernel timings ({@link KernelProfile}) and its
 * datasheet. Every figure is a plain statistic of the timings, so the same files always give the
 * same entry (docs/gpu-efficiency.md describes each):
 *
 * <ul>
 *   <li>GEMMs of up to {@value #STREAMING_MAX_TOKENS} tokens: least squares of {@code time = fixed +
 *       bytes / (peak HBM x fraction)} over every GEMM shape, bytes = the 16-bit weight slice plus
 *       the activations read and written;
 *   <li>GEMMs of {@value #COMPUTE_MIN_TOKENS} tokens and more: the median share of the peak FLOP/s;
 *   <li>GEMMs of up to {@value #DECODE_MAX_TOKENS} tokens, per shape with at least three token
 *       counts: the least-squares slope of time over the FLOPs' time at peak; the median over shapes;
 *   <li>element-wise kernels of up to {@value #DECODE_MAX_TOKENS} tokens: the median time per 1,000
 *       of hidden size;
 *   <li>all-reduces, per group size: the median time of messages up to 1 MiB (latency), and the
 *       least-squares slope over messages of 16 MiB and more (bus bandwidth = algorithm bandwidth x 2
 *       (n - 1) / n, as a share of the datasheet link);
 *   <li>decode attention: least squares of {@code time = fixed + KV bytes / (peak HBM x fraction)};
 *       without such timings, the GEMMs' streaming share.
 * </ul>
 *
 * Repeated timings of one configuration are first reduced to their median.
 */
public final class EfficiencyFit {

  /** Largest token count of the GEMMs the streaming fit uses (weight-bound on every GPU). */
  static final int STREAMING_MAX_TOKENS = 16;
  /** Smallest token count of the GEMMs the FLOP share is taken from (compute-bound). */
  static final int COMPUTE_MIN_TOKENS = 2048;
  /** Largest token count of the decode-sized GEMMs and element-wise kernels. */
  static final int DECODE_MAX_TOKENS = 128;
  private static final long SMALL_MESSAGE = 1L << 20;
  private static final long LARGE_MESSAGE = 16L << 20;

  private EfficiencyFit() {}

  /**
   * The efficiency entry of {@code gpu} (its datasheet: peaks and link) from {@code profile};
   * {@code source} describes the timings in words (recorded in the entry).
   *
   * @throws IllegalArgumentException when the timings cannot determine a figure (too few shapes or
   *     token counts); the message says which and what is needed
   */
  public static GpuEfficiency fit(KernelProfile profile, HardwareSpec gpu, String source) {
    double peakFlopsPerUs = GpuSpec.peakFlopsFor(gpu, 2) / 1e6;
    double hbmBytesPerUs = gpu.memoryBandwidthBytesPerS() / 1e6;

    // GEMMs: one time per (shape, tokens)
    Map<String, Map<Integer, double[]>> byShape = new TreeMap<>();
    Map<String, List<Double>> raw = new TreeMap<>();
    Map<String, KernelProfile.Gemm> any = new TreeMap<>();
    for (KernelProfile.Gemm g : profile.gemms()) {
      String key = g.shape() + "|" + g.k() + "x" + g.n() + "|" + g.tokens();
      raw.computeIfAbsent(key, x -> new ArrayList<>()).add(g.us());
      any.putIfAbsent(key, g);
    }
    List<double[]> streaming = new ArrayList<>(); // {ideal us at peak bandwidth, time}
    List<KernelProfile.Gemm> streamingGemms = new ArrayList<>(); // the first row of each, in the same order
    List<Double> flopShares = new ArrayList<>();
    for (Map.Entry<String, List<Double>> e : raw.entrySet()) {
      KernelProfile.Gemm g = any.get(e.getKey());
      double us = median(e.getValue());
      double t = g.tokens();
      double bytes = 2.0 * (g.k() * g.n() + t * g.k() + t * g.n());
      double flopsUs = 2.0 * t * g.k() * g.n() / peakFlopsPerUs;
      if (g.tokens() <= STREAMING_MAX_TOKENS) {
        streaming.add(new double[] {bytes / hbmBytesPerUs, us});
        streamingGemms.add(g);
      }
      if (g.tokens() >= COMPUTE_MIN_TOKENS) {
        flopShares.add(flopsUs / us);
      }
      if (g.tokens() <= DECODE_MAX_TOKENS) {
        byShape.computeIfAbsent(g.shape() + "|" + g.k() + "x" + g.n(), x -> new TreeMap<>())
            .put(g.tokens(), new double[] {flopsUs, us});
      }
    }
    List<String> notes = new ArrayList<>();
    requireTwoShapes(streamingGemms);
    if (distinct(streaming) < 2) { // e.g. 4096x8192 and 8192x4096 at one token count: the same bytes
      throw new IllegalArgumentException("kernel profile: the GEMM bandwidth needs timings of GEMMs of at least two"
          + " sizes (bytes of weights and activations) at up to " + STREAMING_MAX_TOKENS + " tokens, got one size");
    }
    double[] line = leastSquares(streaming);
    if (!(line[1] > 0)) {
      throw new IllegalArgumentException(notGrowing(streaming, streamingGemms));
    }
    double fixed = line[0];
    if (fixed < 0) { // a negative fixed time is no time: fit the slope alone
      fixed = 0;
      line = new double[] {0, throughOrigin(streaming)};
    }
    double bandwidthFraction = 1.0 / line[1];
    notes.add(streaming.size() + " GEMM timings at <= " + STREAMING_MAX_TOKENS + " tokens");
    if (flopShares.isEmpty()) {
      throw new IllegalArgumentException("kernel profile: the GEMM FLOP share needs GEMM timings at "
          + COMPUTE_MIN_TOKENS + " tokens or more, got none");
    }
    double flopsFraction = median(flopShares);
    notes.add(flopShares.size() + " at >= " + COMPUTE_MIN_TOKENS);
    List<Double> slopes = new ArrayList<>();
    for (Map<Integer, double[]> points : byShape.values()) {
      if (points.size() >= 3) {
        slopes.add(leastSquares(new ArrayList<>(points.values()))[1]);
      }
    }
    if (slopes.isEmpty()) {
      throw new IllegalArgumentException("kernel profile: the decode GEMM cost needs a GEMM shape timed at three or"
          + " more token counts up to " + DECODE_MAX_TOKENS + ", got none");
    }
    double decodeCost = median(slopes);
    if (!(decodeCost > 0)) {
      throw new IllegalArgumentException("kernel profile: GEMM times do not grow with the tokens up to "
          + DECODE_MAX_TOKENS + " (median slope " + decodeCost + "); check the timings");
    }
    notes.add(slopes.size() + " GEMM shapes at <= " + DECODE_MAX_TOKENS + " tokens");

    Map<String, List<Double>> ewRaw = new TreeMap<>();
    Map<String, Integer> ewHidden = new TreeMap<>();
    for (KernelProfile.Elementwise e : profile.elementwise()) {
      if (e.tokens() <= DECODE_MAX_TOKENS) {
        String key = e.shape() + "|" + e.hidden() + "|" + e.tokens();
        ewRaw.computeIfAbsent(key, x -> new ArrayList<>()).add(e.us());
        ewHidden.put(key, e.hidden());
      }
    }
    if (ewRaw.isEmpty()) {
      throw new IllegalArgumentException("kernel profile: the element-wise cost needs element-wise timings at up to "
          + DECODE_MAX_TOKENS + " tokens, got none");
    }
    List<Double> perKiloHidden = new ArrayList<>();
    ewRaw.forEach((k, v) -> perKiloHidden.add(median(v) / (ewHidden.get(k) / 1000.0)));
    double elementwise = median(perKiloHidden);
    notes.add(perKiloHidden.size() + " element-wise timings at <= " + DECODE_MAX_TOKENS + " tokens");

    List<GpuEfficiency.AllReduce> allReduce = allReduce(profile, gpu, notes);

    double attentionFraction = bandwidthFraction;
    String attentionSource = "no decode-attention timings: taken as the GEMMs' streaming share";
    if (!profile.decodeAttention().isEmpty()) {
      List<double[]> pts = new ArrayList<>();
      for (KernelProfile.DecodeAttention a : profile.decodeAttention()) {
        double bytes = 2.0 * 2.0 * a.batch() * (double) a.context() * a.kvHeads() * a.headDim();
        pts.add(new double[] {bytes / hbmBytesPerUs, a.us()});
      }
      double[] al = distinct(pts) >= 2 ? leastSquares(pts) : null;
      if (al == null || al[1] <= 0) {
        throw new IllegalArgumentException("kernel profile: the decode-attention share needs timings of at least two"
            + " KV sizes whose time grows with the bytes, got " + pts.size() + " timing(s)");
      }
      attentionFraction = 1.0 / al[1];
      attentionSource = "measured: " + pts.size() + " decode-attention timings (fixed " + fmt(Math.max(0, al[0]))
          + " us per call)";
    }
    return new GpuEfficiency(GpuEfficiency.MEASURED,
        source + " (" + String.join(", ", notes) + ")",
        GpuEfficiency.round(bandwidthFraction), GpuEfficiency.round(fixed), GpuEfficiency.round(flopsFraction),
        GpuEfficiency.round(decodeCost), GpuEfficiency.round(elementwise), GpuEfficiency.round(attentionFraction),
        attentionSource, allReduce);
  }

  private static List<GpuEfficiency.AllReduce> allReduce(KernelProfile profile, HardwareSpec gpu, List<String> notes) {
    Map<Integer, Map<Long, List<Double>>> byGpus = new TreeMap<>();
    for (KernelProfile.AllReduce a : profile.allReduces()) {
      byGpus.computeIfAbsent(a.gpus(), x -> new TreeMap<>()).computeIfAbsent(a.bytes(), x -> new ArrayList<>())
          .add(a.us());
    }
    List<GpuEfficiency.AllReduce> out = new ArrayList<>();
    double linkBytesPerUs = gpu.interconnectBandwidthBytesPerS() / 1e6;
    for (Map.Entry<Integer, Map<Long, List<Double>>> e : byGpus.entrySet()) {
      int n = e.getKey();
      List<Double> small = new ArrayList<>();
      List<double[]> large = new ArrayList<>();
      List<String> largeRows = new ArrayList<>();
      e.getValue().forEach((bytes, times) -> {
        double us = median(times);
        if (bytes <= SMALL_MESSAGE) {
          small.add(us);
        } else if (bytes >= LARGE_MESSAGE) {
          large.add(new double[] {bytes, us});
        }
      });
      for (KernelProfile.AllReduce a : profile.allReduces()) {
        if (a.gpus() == n && a.bytes() >= LARGE_MESSAGE) {
          largeRows.add(a.where());
        }
      }
      if (small.isEmpty() || distinct(large) < 2) {
        throw new IllegalArgumentException("kernel profile: the all-reduce over " + n + " GPUs needs timings of"
            + " messages up to 1 MiB and of at least two sizes from 16 MiB, got " + small.size() + " and "
            + large.size());
      }
      double slope = leastSquares(large)[1]; // us per byte
      if (!(slope > 0)) {
        throw new IllegalArgumentException("kernel profile: all-reduce times over " + n
            + " GPUs do not grow with the message size from 16 MiB");
      }
      double busBytesPerUs = (1.0 / slope) * 2.0 * (n - 1) / n;
      if (linkBytesPerUs > 0 && busBytesPerUs / linkBytesPerUs > MAX_LINK_SHARE) {
        throw new IllegalArgumentException(String.format(Locale.ROOT, "kernel profile: the all-reduces over %d GPUs"
            + " of 16 MiB and more (%s) give a bus bandwidth of %.1f GB/s, %.2f times the %s link's %.1f GB/s, more"
            + " than an all-reduce can move (at most %.1f times is taken as the datasheet's slack); check the"
            + " timings' unit and --gpu", n, rows(largeRows), busBytesPerUs / 1e3, busBytesPerUs / linkBytesPerUs,
            gpu.name(), linkBytesPerUs / 1e3, MAX_LINK_SHARE));
      }
      out.add(new GpuEfficiency.AllReduce(n, GpuEfficiency.round(median(small)),
          GpuEfficiency.round(busBytesPerUs / linkBytesPerUs)));
      notes.add("all-reduce over " + n + ": " + small.size() + " sizes <= 1 MiB, " + large.size() + " >= 16 MiB");
    }
    return out;
  }

  /**
   * The largest bus bandwidth an all-reduce's timings may give, as a share of the datasheet link: as
   * for the other shares of a datasheet peak ({@link GpuEfficiency}), up to 1.5 for a datasheet
   * that understates; beyond it the timings are wrong (an all-reduce cannot outrun its link).
   */
  static final double MAX_LINK_SHARE = 1.5;

  /**
   * Refuses streaming GEMMs of fewer than two shapes ({@code k x n}): the bandwidth is the slope of
   * time over the weight bytes, which one shape does not give (its token counts only change the
   * activations).
   */
  private static void requireTwoShapes(List<KernelProfile.Gemm> streaming) {
    Map<String, KernelProfile.Gemm> shapes = new TreeMap<>();
    for (KernelProfile.Gemm g : streaming) {
      shapes.putIfAbsent(g.k() + "x" + g.n(), g);
    }
    if (shapes.size() < 2) {
      String got = shapes.isEmpty() ? "none" : "one: " + shapes.keySet().iterator().next() + " (k x n), "
          + shapes.values().iterator().next().where();
      throw new IllegalArgumentException("kernel profile: the GEMM bandwidth needs timings of at least two GEMM"
          + " shapes at up to " + STREAMING_MAX_TOKENS + " tokens, got " + got);
    }
  }

  /**
   * Why the streaming GEMMs give no bandwidth: the two whose time falls (or stays) the most while
   * the GEMM's bytes grow.
   */
  private static String notGrowing(List<double[]> pts, List<KernelProfile.Gemm> gemms) {
    int from = -1;
    int to = -1;
    double drop = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < pts.size(); i++) {
      for (int j = 0; j < pts.size(); j++) {
        if (pts.get(j)[0] > pts.get(i)[0] && pts.get(i)[1] - pts.get(j)[1] > drop) {
          drop = pts.get(i)[1] - pts.get(j)[1];
          from = i;
          to = j;
        }
      }
    }
    String head = "kernel profile: GEMM times at up to " + STREAMING_MAX_TOKENS + " tokens do not grow with the GEMM's"
        + " bytes, so no GEMM bandwidth can be fitted";
    if (from < 0 || drop < 0) {
      return head + "; check the timings";
    }
    KernelProfile.Gemm a = gemms.get(from);
    KernelProfile.Gemm b = gemms.get(to);
    return head + String.format(Locale.ROOT, ": %s at %s takes %s us (%s), %s %s at %s, %.2f times the bytes,"
        + " %s us (%s); check the timings", a.k() + "x" + a.n(), tokens(a.tokens()), fmt(pts.get(from)[1]), a.where(),
        drop > 0 ? "more than" : "as long as", b.k() + "x" + b.n(), tokens(b.tokens()), pts.get(to)[0] / pts.get(from)[0],
        fmt(pts.get(to)[1]), b.where());
  }

  private static String tokens(int n) {
    return n == 1 ? "1 token" : n + " tokens";
  }

  /** Up to three rows, then how many more. */
  private static String rows(List<String> where) {
    return where.size() <= 3 ? String.join(", ", where)
        : String.join(", ", where.subList(0, 3)) + " and " + (where.size() - 3) + " more";
  }

  private static int distinct(List<double[]> pts) {
    return (int) pts.stream().mapToDouble(p -> p[0]).distinct().count();
  }

  /** Ordinary least squares of y = a + b x over {x, y} points: {a, b}. */
  static double[] leastSquares(List<double[]> pts) {
    double n = pts.size();
    double sx = 0;
    double sy = 0;
    for (double[] p : pts) {
      sx += p[0];
      sy += p[1];
    }
    double mx = sx / n;
    double my = sy / n;
    double sxx = 0;
    double sxy = 0;
    for (double[] p : pts) {
      sxx += (p[0] - mx) * (p[0] - mx);
      sxy += (p[0] - mx) * (p[1] - my);
    }
    double b = sxy / sxx;
    return new double[] {my - b * mx, b};
  }

  private static double throughOrigin(List<double[]> pts) {
    double sxx = 0;
    double sxy = 0;
    for (double[] p : pts) {
      sxx += p[0] * p[0];
      sxy += p[0] * p[1];
    }
    return sxy / sxx;
  }

  static double median(List<Double> v) {
    double[] a = v.stream().mapToDouble(Double::doubleValue).toArray();
    Arrays.sort(a);
    int n = a.length;
    return n % 2 == 1 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
  }

  private static String fmt(double v) {
    return String.format(Locale.ROOT, "%.1f", v);
  }
}
