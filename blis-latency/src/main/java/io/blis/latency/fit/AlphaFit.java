package io.blis.latency.fit;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Fits the trained-physics per-request times (alpha) to request journeys, with medians so that a
 * few odd requests do not move them:
 *
 * <ul>
 *   <li>{@code queueing_us}: {@code QUEUED - ARRIVED} of each request's first queue entry;
 *   <li>{@code per_output_token_us}: the growth of the client-side lag over the request's tokens,
 *       {@code ((DEPARTED - FINISHED) - (FIRST_RESPONSE - FIRST_TOKEN)) / (N - 1)} for requests of
 *       {@code N >= 2} output tokens and no preemption;
 *   <li>{@code scheduling_us}: {@code (FIRST_RESPONSE - FIRST_TOKEN) - per_output_token_us} for
 *       requests without preemption;
 *   <li>{@code preemption_us}: the extra first-token lag of preempted requests, per preemption
 *       (kept at its starting value when no request was preempted).
 * </ul>
 */
public final class AlphaFit {

  private AlphaFit() {}

  /**
   * The fit.
   *
   * @param alpha queueing, scheduling, per-output-token and preemption times, microseconds
   * @param fitted which of the four the journeys determined (the others keep their start values)
   * @param requests journeys used
   * @param notIdentified per alpha, why the journeys do not determine it (null when fitted)
   */
  public record Result(double[] alpha, boolean[] fitted, int requests, String[] notIdentified) {}

  /** Fits from {@code journeys}, keeping {@code start} values for what they cannot determine. */
  public static Result fit(List<TracedJourney> journeys, double[] start) {
    List<Double> queueing = new ArrayList<>();
    List<Double> perToken = new ArrayList<>();
    List<double[]> firstLag = new ArrayList<>(); // {lag, preemptions}
    int used = 0;
    for (TracedJourney j : journeys) {
      TracedJourney.Event arrived = first(j.api(), "ARRIVED");
      TracedJourney.Event queued = first(j.core(), "QUEUED");
      if (arrived != null && queued != null) {
        queueing.add((queued.timeNs() - arrived.timeNs()) / 1000.0);
      }
      TracedJourney.Event firstToken = first(j.core(), "FIRST_TOKEN");
      TracedJourney.Event firstResponse = first(j.api(), "FIRST_RESPONSE");
      TracedJourney.Event finished = first(j.core(), "FINISHED");
      TracedJourney.Event departed = first(j.api(), "DEPARTED");
      if (firstToken == null || firstResponse == null) {
        continue;
      }
      used++;
      double lagFirst = (firstResponse.timeNs() - firstToken.timeNs()) / 1000.0;
      int preemptions = (int) j.core().stream().filter(e -> e.name().equals("PREEMPTED")).count();
      firstLag.add(new double[] {lagFirst, preemptions});
      if (finished != null && departed != null && preemptions == 0 && finished.decodeDone() >= 2) {
        double lagLast = (departed.timeNs() - finished.timeNs()) / 1000.0;
        perToken.add((lagLast - lagFirst) / (finished.decodeDone() - 1));
      }
    }
    double[] alpha = start.clone();
    boolean[] fitted = new boolean[4];
    if (!queueing.isEmpty()) {
      alpha[0] = Math.max(0, median(queueing));
      fitted[0] = true;
    }
    if (!perToken.isEmpty()) {
      alpha[2] = Math.max(0, median(perToken));
      fitted[2] = true;
    }
    List<Double> scheduling = new ArrayList<>();
    List<Double> perPreemption = new ArrayList<>();
    for (double[] l : firstLag) {
      if (l[1] == 0) {
        scheduling.add(l[0] - alpha[2]);
      }
    }
    if (!scheduling.isEmpty()) {
      alpha[1] = Math.max(0, median(scheduling));
      fitted[1] = true;
    }
    for (double[] l : firstLag) {
      if (l[1] > 0) {
        perPreemption.add((l[0] - alpha[2] - alpha[1]) / l[1]);
      }
    }
    if (!perPreemption.isEmpty()) {
      alpha[3] = Math.max(0, median(perPreemption));
      fitted[3] = true;
    }
    String[] why = {
        fitted[0] ? null : "no journey records both ARRIVED and QUEUED",
        fitted[1] ? null : "no journey without preemption records its first token at both the engine and the client",
        fitted[2] ? null : "no journey without preemption records its last token at both ends after 2 or more tokens",
        fitted[3] ? null : "no preempted journey in the trace"};
    return new Result(alpha, fitted, used, why);
  }

  private static TracedJourney.Event first(List<TracedJourney.Event> events, String name) {
    for (TracedJourney.Event e : events) {
      if (e.name().equals(name)) {
        return e;
      }
    }
    return null;
  }

  private static double median(List<Double> values) {
    double[] v = values.stream().mapToDouble(Double::doubleValue).toArray();
    Arrays.sort(v);
    int n = v.length;
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
}
