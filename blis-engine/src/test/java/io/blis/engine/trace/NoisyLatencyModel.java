package io.blis.engine.trace;

import io.blis.api.BatchView;
import io.blis.api.LatencyModel;
import io.blis.latency.ForwardingLatencyModel;
import java.util.Random;

/** A latency model whose step times are another's with lognormal noise (seeded: deterministic). */
final class NoisyLatencyModel extends ForwardingLatencyModel {

  private final double sigma;
  private final Random noise;

  /**
   * @param exact the model whose times are perturbed
   * @param sigma log standard deviation of the noise on each step time
   * @param seed the noise's seed
   */
  NoisyLatencyModel(LatencyModel exact, double sigma, long seed) {
    super(exact);
    this.sigma = sigma;
    this.noise = new Random(seed);
  }

  @Override
  public long stepTime(BatchView b) {
    return Math.max(1, Math.round(delegate().stepTime(b) * Math.exp(sigma * noise.nextGaussian())));
  }
}
