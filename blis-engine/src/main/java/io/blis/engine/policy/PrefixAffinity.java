package io.blis.engine.policy;

import io.blis.api.ClusterView;
import io.blis.api.RequestView;
import io.blis.api.Router;

/**
 * Prefix affinity: the router keeps, per instance, a least-recently-used index of the prompt block
 * hashes it sent there. A request goes to the instance where the longest run of its leading blocks
 * was sent before (the least loaded of those on a tie); when no instance matches at least {@code
 * minBlocks} blocks it falls back to least-loaded. The hashes are chained (block i's covers blocks
 * 0..i), so a match stops at the first miss. The router knows only what it routed, not what the
 * instances' caches still hold.
 */
final class PrefixAffinity implements Router {

  private final int blockSize;
  private final int minBlocks;
  /** Keyed by the instance's position in the router's view. */
  private final PrefixIndex index;
  private int[] matched = new int[16];
  private boolean[] tied = new boolean[16];

  PrefixAffinity(int blockSize, int capacityBlocks, int minBlocks) {
    this.blockSize = blockSize;
    this.index = new PrefixIndex(capacityBlocks);
    this.minBlocks = minBlocks;
  }

  @Override
  public int route(RequestView request, ClusterView cluster) {
    long[] hashes = request.promptBlockHashes(blockSize);
    int best = match(hashes, cluster);
    int choice;
    if (best >= minBlocks && best > 0) {
      for (int i = 0, n = cluster.size(); i < n; i++) {
        tied[i] = matched[i] == best;
      }
      choice = Load.extreme(cluster, 1, tied);
    } else {
      choice = Load.extreme(cluster, 1, null);
    }
    index.record(hashes, choice);
    return choice;
  }

  @Override
  public boolean score(RequestView request, ClusterView cluster, double[] scores) {
    long[] hashes = request.promptBlockHashes(blockSize);
    match(hashes, cluster);
    for (int i = 0, n = cluster.size(); i < n; i++) {
      scores[i] = hashes.length == 0 ? 0 : (double) matched[i] / hashes.length;
    }
    return true;
  }

  /** Fills {@link #matched} per instance; returns the best. */
  private int match(long[] hashes, ClusterView cluster) {
    int n = cluster.size();
    if (matched.length < n) {
      matched = new int[n];
      tied = new boolean[n];
    }
    int best = 0;
    for (int i = 0; i < n; i++) {
      int m = index.matched(hashes, i);
      matched[i] = m;
      best = Math.max(best, m);
    }
    return best;
  }
}
