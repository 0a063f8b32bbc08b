package io.blis.engine.validate;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.api.Coefficients;
import io.blis.engine.result.SimulationResult;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Prediction intervals of a simulation's mean E2E and mean TTFT: the same workload simulated once
 * more with each member of an {@link Ensemble}, the interval built around the point result as
 * {@link PredictionInterval} describes.
 *
 * <pre>{@code
 * Ensemble ensemble = Ensemble.bundled();
 * Function<Coefficients, SimulationResult> simulate = c -> myBuilder(c).build().run();
 * SimulationResult point = simulate.apply(Coefficients.empty());
 * Map<String, PredictionInterval> iv = SimulationIntervals.of(point, simulate, ensemble, 0.9);
 * iv.get("e2e_mean_ms").low();
 * }</pre>
 */
public final class SimulationIntervals {

  /** Keys of the intervals, as in the result JSON's {@code prediction_interval} object. */
  public static final List<String> KEYS = List.of("e2e_mean_ms", "ttft_mean_ms");

  private SimulationIntervals() {}

  /**
   * Simulates each member ({@code simulate} must build a fresh simulation of the same workload and
   * seed with the given coefficients) and returns the intervals keyed by {@link #KEYS}.
   */
  public static Map<String, PredictionInterval> of(SimulationResult point,
      Function<Coefficients, SimulationResult> simulate, Ensemble ensemble, double level) {
    return of(point, simulate, ensemble, List.of(), level);
  }

  /**
   * As {@link #of(SimulationResult, Function, Ensemble, double)}, for a deployment that lies
   * outside the ensemble's fit domain in the ways {@code distances} says ({@link
   * Ensemble#distances}); an overloaded point prediction adds its own.
   */
  public static Map<String, PredictionInterval> of(SimulationResult point,
      Function<Coefficients, SimulationResult> simulate, Ensemble ensemble, List<Extrapolation> distances,
      double level) {
    List<SimulationResult> members = new ArrayList<>();
    for (Ensemble.Member m : ensemble.members()) {
      members.add(simulate.apply(m.coefficients()));
    }
    return of(point, members, ensemble, distances, level);
  }

  /** The intervals from results already simulated, one per member in the ensemble's order. */
  public static Map<String, PredictionInterval> of(SimulationResult point, List<SimulationResult> members,
      Ensemble ensemble, double level) {
    return of(point, members, ensemble, List.of(), level);
  }

  /** As above, for a deployment with these distances from the fit domain. */
  public static Map<String, PredictionInterval> of(SimulationResult point, List<SimulationResult> members,
      Ensemble ensemble, List<Extrapolation> distances, double level) {
    if (members.size() != ensemble.members().size()) {
      throw new IllegalArgumentException("one result per ensemble member expected, got " + members.size());
    }
    List<Extrapolation> all = new ArrayList<>(distances);
    double ttftMs = point.overall().ttft().meanUs() / 1000.0;
    long injected = point.overall().injectedRequests();
    double failed = injected == 0 ? 0
        : (double) (point.overall().timedOutRequests() + point.overall().rejectedRequests()) / injected;
    if (ensemble.domain() != null && Extrapolation.saturated(ttftMs, failed)) {
      all.add(Extrapolation.saturatedRun(ttftMs, failed));
    }
    if (ensemble.domain() != null) {
      RunDistances.batch(RunDistances.meanBatch(point)).ifPresent(all::add);
    }
    Map<String, PredictionInterval> out = new LinkedHashMap<>();
    out.put(KEYS.get(0), interval(point, members, r -> r.overall().e2e().meanUs(), ensemble, Metric.E2E_MEAN,
        all, level));
    out.put(KEYS.get(1), interval(point, members, r -> r.overall().ttft().meanUs(), ensemble, Metric.TTFT_MEAN,
        all, level));
    return out;
  }

  private static PredictionInterval interval(SimulationResult point, List<SimulationResult> members,
      Function<SimulationResult, Double> us, Ensemble ensemble, Metric metric, List<Extrapolation> distances,
      double level) {
    double[] v = members.stream().mapToDouble(r -> us.apply(r) / 1000.0).toArray();
    return PredictionInterval.of(us.apply(point) / 1000.0, v, ensemble.residual(metric),
        ensemble.extrapolationLogSd(distances, metric), distances, level);
  }

  /**
   * The {@code prediction_interval} JSON object: {@code level}, {@code members}, then per key
   * {@code point}, {@code low}, {@code high} (ms), {@code member_log_sd}, {@code residual_log_sd}.
   */
  public static ObjectNode json(Map<String, PredictionInterval> intervals, Ensemble ensemble) {
    ObjectNode n = JsonNodeFactory.instance.objectNode();
    PredictionInterval any = intervals.values().iterator().next();
    n.put("level", BigDecimal.valueOf(any.level()).stripTrailingZeros());
    n.put("ensemble", ensemble.source());
    n.put("members", ensemble.members().size());
    com.fasterxml.jackson.databind.node.ArrayNode why = n.putArray("extrapolation");
    any.extrapolation().forEach(x -> why.add(x.reason()));
    for (var e : intervals.entrySet()) {
      ObjectNode i = n.putObject(e.getKey());
      PredictionInterval pi = e.getValue();
      put(i, "point", pi.point(), 3);
      put(i, "low", pi.low(), 3);
      put(i, "high", pi.high(), 3);
      put(i, "member_log_sd", pi.memberLogSd(), 5);
      put(i, "residual_log_sd", pi.residualLogSd(), 5);
      put(i, "extrapolation_log_sd", pi.extrapolationLogSd(), 5);
    }
    return n;
  }

  private static void put(ObjectNode n, String key, double v, int scale) {
    if (Double.isFinite(v)) {
      n.put(key, BigDecimal.valueOf(v).setScale(scale, RoundingMode.HALF_EVEN).stripTrailingZeros());
    } else {
      n.putNull(key);
    }
  }
}
