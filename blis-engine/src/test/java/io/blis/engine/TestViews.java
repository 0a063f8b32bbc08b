package io.blis.engine;

import io.blis.api.ClusterView;
import io.blis.api.InstanceSnapshot;

/** Hand-made router views for policy tests. */
public final class TestViews {

  private TestViews() {}

  /** An instance as a router sees it. */
  public record Inst(int index, int queueDepth, int runningBatchSize, double kvUtilization, int inFlight,
      int cachedPrefixTokens) implements InstanceSnapshot {}

  /** A cluster of such instances at {@code nowUs}. */
  public record View(long nowUs, Inst... instances) implements ClusterView {
    @Override
    public int size() {
      return instances.length;
    }

    @Override
    public InstanceSnapshot get(int index) {
      return instances[index];
    }
  }
}
