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
  private final int capacityBlocks;
  private final int minBlocks;
  private HashLru[] index = new HashLru[0];
  private int[] matched = new int[16];
  private boolean[] tied = new boolean[16];

  PrefixAffinity(int blockSize, int capacityBlocks, int minBlocks) {
    this.blockSize = blockSize;
    this.capacityBlocks = capacityBlocks;
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
    // last block first: the leading blocks end up most recent, so eviction trims a prefix from its
    // end and never leaves a tail that the chained match (which stops at the first miss) cannot use
    HashLru lru = index[choice];
    for (int b = hashes.length - 1; b >= 0; b--) {
      lru.touch(hashes[b]);
    }
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
    if (index.length < n) {
      HashLru[] bigger = java.util.Arrays.copyOf(index, n);
      for (int i = index.length; i < n; i++) {
        bigger[i] = new HashLru(capacityBlocks);
      }
      index = bigger;
    }
    if (matched.length < n) {
      matched = new int[n];
      tied = new boolean[n];
    }
    int best = 0;
    for (int i = 0; i < n; i++) {
      int m = 0;
      while (m < hashes.length && index[i].contains(hashes[m])) {
        m++;
      }
      matched[i] = m;
      best = Math.max(best, m);
    }
    return best;
  }
}
