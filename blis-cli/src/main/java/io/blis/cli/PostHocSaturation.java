package io.blis.cli;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.api.RequestView;
import io.blis.engine.EngineListener;
import io.blis.engine.StepRecord;
import io.blis.workload.RequestOutcome;
import java.util.Arrays;
import java.util.Locale;

/**
 * Go BLIS's post-hoc saturation verdict of a run ({@code --post-hoc-detector}), from its arrivals
 * and its completed requests' end-to-end latencies in the order they completed:
 *
 * <ul>
 *   <li>{@code composite}: the larger of the rate deficit ({@code 1 - completions/arrivals}, at
 *       least 0) and the latency trend (the second half's mean E2E over the first half's, minus 1,
 *       counted only when the four quarters' means rise one after another and there are at least
 *       20 completions; at most 1). Below the noise floor {@code 1/sqrt(arrivals)} the run is
 *       STABLE; OVERLOADED when the trend is above it, else BACKLOGGED. Confidence {@code
 *       min(1, arrivals/20)}.
 *   <li>{@code threshold}: mean E2E against {@code thresholdMs}: STABLE below it (score half its
 *       share of the threshold), OVERLOADED from it on (score 0.75 and up to 0.25 more by the
 *       excess). Confidence {@code 1 - 1/sqrt(completions + 1)}.
 * </ul>
 *
 * Listens to the engine ({@link EngineListener}), forwarding every event to {@code next} when it
 * is not null (the OpenTelemetry writer).
 */
final class PostHocSaturation implements EngineListener {

  /** The detectors {@code --post-hoc-detector} names. */
  static final java.util.List<String> DETECTORS = java.util.List.of("none", "composite", "threshold");

  private final String detector;
  private final double thresholdMs;
  private final EngineListener next;
  private long arrivals;
  private int completions;
  private long[] endUs = new long[1024];
  private long[] ids = new long[1024];
  private double[] e2eMs = new double[1024];

  PostHocSaturation(String detector, double thresholdMs, EngineListener next) {
    this.detector = detector;
    this.thresholdMs = thresholdMs;
    this.next = next;
  }

  @Override
  public void onArrived(RequestView request, long timeUs) {
    arrivals++;
    if (next != null) {
      next.onArrived(request, timeUs);
    }
  }

  @Override
  public void onFinished(int instance, RequestView request, RequestOutcome outcome, long engineEndUs,
      long clientEndUs) {
    if (outcome == RequestOutcome.COMPLETED) {
      if (completions == endUs.length) {
        endUs = Arrays.copyOf(endUs, 2 * completions);
        ids = Arrays.copyOf(ids, 2 * completions);
        e2eMs = Arrays.copyOf(e2eMs, 2 * completions);
      }
      endUs[completions] = clientEndUs;
      ids[completions] = request.id();
      e2eMs[completions] = (clientEndUs - request.arrivalTimeUs()) / 1000.0;
      completions++;
    }
    if (next != null) {
      next.onFinished(instance, request, outcome, engineEndUs, clientEndUs);
    }
  }

  @Override
  public void onQueued(int instance, RequestView request, long timeUs) {
    if (next != null) {
      next.onQueued(instance, request, timeUs);
    }
  }

  @Override
  public void onScheduled(int instance, RequestView request, long stepId, boolean resume, long timeUs) {
    if (next != null) {
      next.onScheduled(instance, request, stepId, resume, timeUs);
    }
  }

  @Override
  public void onFirstToken(int instance, RequestView request, long stepId, long timeUs, long clientUs) {
    if (next != null) {
      next.onFirstToken(instance, request, stepId, timeUs, clientUs);
    }
  }

  @Override
  public void onToken(int instance, RequestView request, int tokenIndex, long timeUs, long clientUs) {
    if (next != null) {
      next.onToken(instance, request, tokenIndex, timeUs, clientUs);
    }
  }

  @Override
  public void onPreempted(int instance, RequestView request, long stepId, long timeUs) {
    if (next != null) {
      next.onPreempted(instance, request, stepId, timeUs);
    }
  }

  @Override
  public void onStep(int instance, StepRecord step) {
    if (next != null) {
      next.onStep(instance, step);
    }
  }

  /** The verdict, as Go BLIS writes its {@code saturation} object. */
  ObjectNode verdict() {
    ObjectNode out = JsonNodeFactory.instance.objectNode();
    ObjectNode signals = JsonNodeFactory.instance.objectNode();
    String level;
    double score;
    double confidence;
    double[] latencies = inCompletionOrder();
    if (detector.equals("threshold")) {
      double mean = mean(latencies, 0, latencies.length);
      if (latencies.length == 0) {
        level = "STABLE";
        score = 0;
        confidence = 0;
      } else {
        boolean over = mean >= thresholdMs;
        level = over ? "OVERLOADED" : "STABLE";
        score = over ? 0.75 + Math.min(0.25, (mean - thresholdMs) / thresholdMs / 4) : 0.5 * mean / thresholdMs;
        confidence = 1 - 1 / Math.sqrt(latencies.length + 1.0);
        signals.put("mean_e2e", mean);
        signals.put("threshold", thresholdMs);
      }
    } else if (arrivals == 0) {
      level = "STABLE";
      score = 0;
      confidence = 0;
    } else {
      double deficit = Math.max(0, 1 - (double) completions / arrivals);
      int n = latencies.length;
      double trendRaw = 0;
      double trend = 0;
      boolean monotone = false;
      if (n >= 2) {
        double first = mean(latencies, 0, n / 2);
        double second = mean(latencies, n / 2, n);
        trendRaw = first > 0 ? Math.max(0, (second - first) / first) : 0;
        if (n >= 20) {
          int q = n / 4;
          double q1 = mean(latencies, 0, q);
          double q2 = mean(latencies, q, 2 * q);
          double q3 = mean(latencies, 2 * q, 3 * q);
          double q4 = mean(latencies, 3 * q, n);
          monotone = q1 < q2 && q2 < q3 && q3 < q4;
          trend = monotone ? trendRaw : 0;
        }
      }
      double floor = 1 / Math.sqrt(arrivals);
      score = Math.max(deficit, Math.min(trend, 1));
      level = score < floor ? "STABLE" : trend > floor ? "OVERLOADED" : "BACKLOGGED";
      confidence = Math.min(1, arrivals / 20.0);
      signals.put("latency_trend", Math.min(trend, 1));
      signals.put("latency_trend_raw", Math.min(trendRaw, 1));
      signals.put("noise_floor", floor);
      signals.put("quartile_monotone", monotone ? 1.0 : 0.0);
      signals.put("rate_deficit", deficit);
    }
    out.put("detector", detector);
    out.put("level", level);
    out.put("score", round(score));
    out.put("confidence", round(confidence));
    ObjectNode rounded = JsonNodeFactory.instance.objectNode();
    signals.fieldNames().forEachRemaining(k -> rounded.put(k, round(signals.get(k).asDouble())));
    out.set("signals", rounded);
    return out;
  }

  /** The completed requests' E2E latencies ordered by completion time, then request id. */
  private double[] inCompletionOrder() {
    Integer[] order = new Integer[completions];
    for (int i = 0; i < completions; i++) {
      order[i] = i;
    }
    Arrays.sort(order, (a, b) -> endUs[a] != endUs[b] ? Long.compare(endUs[a], endUs[b]) : Long.compare(ids[a], ids[b]));
    double[] out = new double[completions];
    for (int i = 0; i < completions; i++) {
      out[i] = e2eMs[order[i]];
    }
    return out;
  }

  private static double mean(double[] v, int from, int to) {
    if (to <= from) {
      return 0;
    }
    double sum = 0;
    for (int i = from; i < to; i++) {
      sum += v[i];
    }
    return sum / (to - from);
  }

  private static double round(double v) {
    return Double.parseDouble(String.format(Locale.ROOT, "%.6f", v));
  }
}
