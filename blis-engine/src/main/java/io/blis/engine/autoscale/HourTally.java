package io.blis.engine.autoscale;

import io.blis.engine.result.AutoscaleReport;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Requests finished, completed, and completed within their targets, by the hour they arrived in. */
final class HourTally {
  private long[] finished = new long[24];
  private long[] completed = new long[24];
  private long[] met = new long[24];

  /** A request that arrived at {@code arrivalUs} ended, completed or not, within its targets or not. */
  void add(long arrivalUs, boolean done, boolean metSlo) {
    int hour = (int) (arrivalUs / 3_600_000_000L);
    if (hour >= finished.length) {
      int n = Math.max(hour + 1, finished.length * 2);
      finished = Arrays.copyOf(finished, n);
      completed = Arrays.copyOf(completed, n);
      met = Arrays.copyOf(met, n);
    }
    finished[hour]++;
    if (done) {
      completed[hour]++;
      if (metSlo) {
        met[hour]++;
      }
    }
  }

  /** The hours in which some request arrived, in order. */
  List<AutoscaleReport.Hour> hours() {
    List<AutoscaleReport.Hour> out = new ArrayList<>();
    for (int h = 0; h < finished.length; h++) {
      if (finished[h] > 0) {
        out.add(new AutoscaleReport.Hour(h, finished[h], completed[h], met[h]));
      }
    }
    return out;
  }
}
