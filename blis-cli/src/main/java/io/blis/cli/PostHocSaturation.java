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
  private long[] arrivalUs = new long[1024];

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
        arrivalUs = Arrays.copyOf(arrivalUs, 2 * completions);
      }
      arrivalUs[completions] = request.arrivalTimeUs();
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

  /** The completed requests as {@link SaturationTrace}'s event stream. */
  SaturationTrace.Events events() {
    long[] e2e = new long[completions];
    for (int i = 0; i < completions; i++) {
      e2e[i] = endUs[i] - arrivalUs[i];
    }
    return new SaturationTrace.Events(Arrays.copyOf(ids, completions), Arrays.copyOf(arrivalUs, completions), e2e);
  }

  /**
   * The verdict, as Go BLIS writes its {@code saturation} object: its detector's verdict after
   * every arrival of the run and every completion in the order the client saw them end.
   */
  ObjectNode verdict() {
    SaturationTrace.Detector d = detector.equals("threshold") ? SaturationTrace.threshold(thresholdMs)
        : SaturationTrace.composite();
    for (long a = 0; a < arrivals; a++) {
      d.observe(0, false, 0);
    }
    for (double latency : inCompletionOrder()) {
      d.observe(0, true, latency);
    }
    SaturationTrace.Result r = d.detect();
    ObjectNode out = JsonNodeFactory.instance.objectNode();
    out.put("detector", detector);
    out.put("level", SaturationTrace.levelName(r.level()));
    out.put("score", round(r.score()));
    out.put("confidence", round(r.confidence()));
    ObjectNode signals = JsonNodeFactory.instance.objectNode();
    r.signals().forEach((k, v) -> signals.put(k, round(v)));
    out.set("signals", signals);
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

  private static double round(double v) {
    return Double.parseDouble(String.format(Locale.ROOT, "%.6f", v));
  }
}
