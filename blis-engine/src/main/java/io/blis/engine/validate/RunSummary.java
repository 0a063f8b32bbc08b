package io.blis.engine.validate;

import java.util.List;

/**
 * Statistics of a whole run and of each of its load stages (observed or predicted).
 *
 * @param overall the whole run (stage -1)
 * @param stages one entry per load stage, in stage order
 */
public record RunSummary(RunStats overall, List<RunStats> stages) {

  public RunSummary {
    if (overall == null) {
      throw new IllegalArgumentException("run summary: overall statistics are required");
    }
    stages = List.copyOf(stages);
  }
}
