package io.blis.engine.policy;

import java.util.List;

/** The weighted router's scorer names, for tests outside this package. */
public final class WeightedScorersForTest {

  private WeightedScorersForTest() {}

  public static List<String> names() {
    return Weighted.SCORERS;
  }
}
