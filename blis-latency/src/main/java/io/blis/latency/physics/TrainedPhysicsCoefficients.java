package io.blis.latency.physics;

import io.blis.api.Coefficients;
import io.blis.latency.coeff.CoefficientFiles;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The coefficients of the {@code trained-physics} latency model as one ordered vector, for
 * calibrators: names, units, bundled defaults and physically plausible bounds of each, and
 * conversions between that vector and {@link Coefficients} (vectors {@code beta}, 15 values, and
 * {@code alpha}, 4 values).
 *
 * <p>Multipliers scale ideal times computed at peak hardware rates, so they are inverse
 * efficiencies: their lower bound is 1 (a value below 1 would mean faster than the datasheet).
 * Overheads are in microseconds, bounded below by 0 and above by generous maxima.
 */
public final class TrainedPhysicsCoefficients {

  /** Name of the latency model these coefficients belong to. */
  public static final String LATENCY_MODEL = "trained-physics";

  /** Length of the {@code beta} vector (step-time terms). */
  public static final int BETA_LENGTH = 15;

  /** Length of the {@code alpha} vector (per-request times). */
  public static final int ALPHA_LENGTH = 4;

  /**
   * One coefficient.
   *
   * @param name unique name, e.g. {@code decode_memory}
   * @param vector the coefficient vector holding it ({@code beta} or {@code alpha})
   * @param index its index in that vector
   * @param unit {@code x} for a dimensionless multiplier of an ideal time, {@code passes} for a
   *     count of reads of a request's logits, else {@code us}
   * @param meaning what it scales or adds
   * @param lower smallest physically plausible value
   * @param upper largest plausible value
   */
  public record Term(
      String name, String vector, int index, String unit, String meaning, double lower,
      double upper) {}

  private static final List<Term> TERMS;

  static {
    List<Term> t = new ArrayList<>();
    beta(t, "prefill_compute", "x", "prefill FLOPs at peak FLOP/s", 1, 10);
    beta(t, "prefill_memory", "x", "prefill KV bytes at peak HBM bandwidth", 1, 10);
    beta(t, "decode_compute", "x", "decode FLOPs at peak FLOP/s, added to the step (not hidden under the weight reads)", 0, 10);
    beta(t, "decode_memory", "x", "decode KV bytes at peak HBM bandwidth", 1, 10);
    beta(t, "weight_load", "x", "dense weight bytes per GPU at peak HBM bandwidth", 1, 5);
    beta(t, "expert_weight_load", "x", "expected distinct expert weight bytes at peak HBM", 1, 10);
    beta(t, "tp_comm", "x", "ring all-reduce bytes at peak interconnect bandwidth", 1, 20);
    beta(t, "moe_routing", "x", "MoE dispatch/combine bytes at peak HBM bandwidth", 1, 20);
    beta(t, "per_layer_us", "us", "per transformer layer per step", 0, 500);
    beta(t, "per_allreduce_us", "us", "per tensor-parallel all-reduce (2 per layer if TP > 1)", 0, 100);
    beta(t, "per_request_us", "us", "per request in the step", 0, 1000);
    beta(t, "per_step_us", "us", "per step (CPU scheduling, sampling, launch)", 0, 20000);
    beta(t, "per_moe_layer_us", "us", "per MoE layer per step", 0, 1000);
    beta(t, "sampling_us_per_kvocab", "us", "per step per 1000 vocabulary entries, for models sampled with top-p/top-k", 0, 100);
    beta(t, "sampling_passes", "passes", "per request per step, passes over its fp32 logits at peak HBM bandwidth, for models sampled with top-p/top-k", 0, 1000);
    alpha(t, "queueing_us", "arrival to waiting queue, per request", 0, 100000);
    alpha(t, "scheduling_us", "fixed per-request overhead, once to TTFT and E2E", 0, 100000);
    alpha(t, "per_output_token_us", "per output token (detokenize, stream)", 0, 5000);
    alpha(t, "preemption_us", "per preemption of a request", 0, 100000);
    TERMS = Collections.unmodifiableList(t);
  }

  private static void beta(List<Term> t, String name, String unit, String meaning, double lo, double hi) {
    t.add(new Term(name, "beta", t.size(), unit, meaning, lo, hi));
  }

  private static void alpha(List<Term> t, String name, String meaning, double lo, double hi) {
    t.add(new Term(name, "alpha", t.size() - BETA_LENGTH, "us", meaning, lo, hi));
  }

  private TrainedPhysicsCoefficients() {}

  /** The coefficients in vector order: the 15 beta terms, then the 4 alpha terms. */
  public static List<Term> terms() {
    return TERMS;
  }

  /** Names of the coefficients in vector order. */
  public static List<String> names() {
    List<String> n = new ArrayList<>(TERMS.size());
    TERMS.forEach(t -> n.add(t.name()));
    return n;
  }

  /** Number of coefficients (19). */
  public static int size() {
    return TERMS.size();
  }

  /** The bundled default coefficients ({@code coefficients/trained-physics.yaml}). */
  public static Coefficients bundled() {
    return CoefficientFiles.bundled(LATENCY_MODEL);
  }

  /** The bundled defaults as a vector in {@link #terms()} order. */
  public static double[] defaults() {
    return toArray(bundled());
  }

  /** Lower bounds in {@link #terms()} order. */
  public static double[] lowerBounds() {
    double[] v = new double[TERMS.size()];
    for (int i = 0; i < v.length; i++) {
      v[i] = TERMS.get(i).lower();
    }
    return v;
  }

  /** Upper bounds in {@link #terms()} order. */
  public static double[] upperBounds() {
    double[] v = new double[TERMS.size()];
    for (int i = 0; i < v.length; i++) {
      v[i] = TERMS.get(i).upper();
    }
    return v;
  }

  /**
   * Coefficients ({@code beta} and {@code alpha}) from a vector in {@link #terms()} order.
   *
   * @throws IllegalArgumentException if the length is not {@link #size()} or a value is negative
   *     or not finite
   */
  public static Coefficients toCoefficients(double[] values, String source) {
    if (values.length != TERMS.size()) {
      throw new IllegalArgumentException(
          source + ": trained-physics needs " + TERMS.size() + " coefficients " + names()
              + ", got " + values.length);
    }
    for (int i = 0; i < values.length; i++) {
      if (!Double.isFinite(values[i]) || values[i] < 0) {
        throw new IllegalArgumentException(
            source + ": coefficient " + TERMS.get(i).name() + " must be finite and >= 0, got "
                + values[i]);
      }
    }
    double[] beta = new double[BETA_LENGTH];
    double[] alpha = new double[ALPHA_LENGTH];
    System.arraycopy(values, 0, beta, 0, BETA_LENGTH);
    System.arraycopy(values, BETA_LENGTH, alpha, 0, ALPHA_LENGTH);
    Map<String, double[]> m = new LinkedHashMap<>();
    m.put("beta", beta);
    m.put("alpha", alpha);
    return Coefficients.of(source, m);
  }

  /**
   * The vector in {@link #terms()} order of {@code c}; vectors missing from {@code c} come from
   * the bundled defaults; a 13- or 14-value beta (written before {@code sampling_us_per_kvocab} or {@code
   * sampling_passes}; the missing ones are 0) and a 3-value
   * alpha (no preemption time) are accepted.
   *
   * @throws IllegalArgumentException on wrong vector lengths or negative values
   */
  public static double[] toArray(Coefficients c) {
    TrainedPhysicsParameters p = TrainedPhysicsParameters.of(c);
    return p.flat();
  }
}
