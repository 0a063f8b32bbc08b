package io.blis.workload.synthetic;

/**
 * A time range in which a client sends requests: {@code [startUs, endUs)}, microseconds since the
 * start of the simulation.
 */
public record ActiveWindow(long startUs, long endUs) {

  public ActiveWindow {
    if (startUs < 0 || endUs <= startUs) {
      throw new IllegalArgumentException(
          "lifecycle window must satisfy 0 <= start < end, got [" + startUs + ", " + endUs + ") us");
    }
  }
}
