package io.blis.engine.validate;

import java.util.List;
import java.util.Objects;

/**
 * Statistics of a whole run and of each of its load stages (observed or predicted), and the shape
 * of its latencies where per-request data was there.
 *
 * @param overall the whole run (stage -1)
 * @param stages one entry per load stage, in stage order
 * @param profile latency distributions and timeline ({@link LatencyProfile#NONE} for a run known
 *     only by its summary)
 */
public record RunSummary(RunStats overall, List<RunStats> stages, LatencyProfile profile) {

  public RunSummary {
    if (overall == null) {
      throw new IllegalArgumentException("run summary: overall statistics are required");
    }
    stages = List.copyOf(stages);
    Objects.requireNonNull(profile, "profile");
  }

  /** A summary without per-request data. */
  public RunSummary(RunStats overall, List<RunStats> stages) {
    this(overall, stages, LatencyProfile.NONE);
  }

  /** The same statistics with another profile. */
  public RunSummary withProfile(LatencyProfile p) {
    return new RunSummary(overall, stages, p);
  }
}
