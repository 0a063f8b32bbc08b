package io.blis.workload.synthetic;

import java.util.Arrays;
import java.util.List;

/**
 * A client's rate hour by hour over a day that repeats: 24 multipliers of its rate, hour 0
 * starting at time 0. The client's arrival process runs at its own rate in an operational time
 * that passes {@code m} times as fast as real time during an hour of multiplier {@code m} (a
 * non-homogeneous process by time change): Poisson arrivals stay Poisson, with the rate of each
 * hour; bursty processes keep their shape. A curve whose multipliers average 1 keeps the client's
 * daily mean rate; an hour of 0 has no arrivals.
 */
public final class RateCurve {

  /** The rate constant in time. */
  public static final RateCurve NONE = new RateCurve(null);

  private static final double HOUR_S = 3600.0;
  private final double[] multipliers;
  private final double dayOpS;

  private RateCurve(double[] multipliers) {
    this.multipliers = multipliers;
    double d = 0;
    if (multipliers != null) {
      for (double m : multipliers) {
        d += m * HOUR_S;
      }
    }
    this.dayOpS = d;
  }

  /**
   * The curve of 24 hourly multipliers.
   *
   * @throws IllegalArgumentException unless there are 24 finite multipliers >= 0, one of them > 0
   */
  public static RateCurve hourly(List<Double> multipliers) {
    if (multipliers == null || multipliers.size() != 24) {
      throw new IllegalArgumentException("rate_by_hour needs 24 multipliers (hours 0 to 23), got "
          + (multipliers == null ? "none" : multipliers.size()));
    }
    double[] m = new double[24];
    boolean any = false;
    for (int h = 0; h < 24; h++) {
      Double v = multipliers.get(h);
      if (v == null || !(v >= 0) || v.isInfinite()) {
        throw new IllegalArgumentException("rate_by_hour[" + h + "] must be a finite number >= 0, got " + v);
      }
      m[h] = v;
      any |= v > 0;
    }
    if (!any) {
      throw new IllegalArgumentException("rate_by_hour: every hour is 0, so the client would send nothing");
    }
    return new RateCurve(m);
  }

  /** Whether the rate changes over the day. */
  public boolean varies() {
    return multipliers != null;
  }

  /** The 24 multipliers, or an empty list for {@link #NONE}. */
  public List<Double> multipliers() {
    return multipliers == null ? List.of() : Arrays.stream(multipliers).boxed().toList();
  }

  /** Real seconds at which {@code opS} seconds of operational time have passed. */
  double realS(double opS) {
    if (multipliers == null) {
      return opS;
    }
    double days = Math.floor(opS / dayOpS);
    double rest = opS - days * dayOpS;
    for (int h = 0; h < 24; h++) {
      double span = multipliers[h] * HOUR_S;
      if (rest < span) {
        return days * 86_400 + h * HOUR_S + rest / multipliers[h];
      }
      rest -= span;
    }
    // rounding left a sliver past the day: the start of the next hour with arrivals
    return realS((days + 1) * dayOpS);
  }

  /** Operational seconds passed at real time {@code realS}. */
  double opS(double realS) {
    if (multipliers == null) {
      return realS;
    }
    double days = Math.floor(realS / 86_400);
    double rest = realS - days * 86_400;
    double op = days * dayOpS;
    int h = 0;
    while (h < 23 && rest >= HOUR_S) {
      op += multipliers[h] * HOUR_S;
      rest -= HOUR_S;
      h++;
    }
    return op + multipliers[h] * rest;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RateCurve c && Arrays.equals(multipliers, c.multipliers);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(multipliers);
  }

  @Override
  public String toString() {
    return multipliers == null ? "constant" : "hourly " + Arrays.toString(multipliers);
  }
}
