package io.blis.engine.corpus;

import io.blis.workload.PromptTokens;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.Sampling;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The requests a corpus point's benchmark sent, as a request source:
 *
 * <ul>
 *   <li><b>latency</b>: a warm-up batch of {@code batch} prompts at time 0, then, when its last
 *       request has ended, the measured batch (stage 1). The benchmark repeats the same prompts, so
 *       with prefix caching (V1's default) the measured batch finds its prompts cached; without it
 *       the measured batch's prompts are new content;
 *   <li><b>throughput</b>: every prompt at time 0 (stage 0);
 *   <li><b>serving</b> and <b>client</b>: {@code num_prompts} requests, the first at time 0 and
 *       the others after gamma-distributed gaps of mean {@code 1 / request_rate} and shape {@code
 *       burstiness} (exponential: Poisson arrivals), or all at time 0 for an infinite rate; with a
 *       {@code max_concurrency}, a request whose time has come waits for one of that many slots,
 *       as the benchmark's semaphore makes it.
 * </ul>
 *
 * Lengths: fixed when the point gives {@code input_tokens} / {@code output_tokens} (spread by the
 * random dataset's range ratio when one was given; at the measured mean instead when it gives one
 * too, the requests having stopped early); else drawn from a log-normal of the measured
 * mean with the coefficient of variation {@link #VARYING_CV} (ShareGPT-like), clipped to [4, 8
 * times the mean], and rescaled so that the sample's mean is the measured one. Prompts are unique
 * random content except a shared {@code prefix_len}. Every request generates exactly its output
 * length (ignore-EOS semantics; for a dataset replayed from measured means, the measured mean).
 */
final class PointWorkload {

  /** Coefficient of variation of lengths replayed from measured means. */
  static final double VARYING_CV = 0.9;

  private PointWorkload() {}

  /** The source of {@code p}'s requests; {@code reuseCachedPrompts}: the latency benchmark's prefix cache. */
  static RequestSource of(CorpusPoint p, boolean reuseCachedPrompts, long seed) {
    CorpusPoint.Workload w = p.workload();
    return switch (p.benchmark()) {
      case LATENCY -> new RepeatedBatch(w.batch(), w.inputTokens(), w.outputTokens(), reuseCachedPrompts, seed);
      case THROUGHPUT -> RequestSource.of(requests(w, 0, true, seed));
      case SERVING, CLIENT -> {
        List<RequestSpec> all = requests(w, 0, w.allAtOnce(), seed);
        yield w.maxConcurrency() > 0 && w.maxConcurrency() < all.size()
            ? new Gated(all, w.maxConcurrency()) : RequestSource.of(all);
      }
    };
  }

  /** The requests of a serving or throughput point, arrival times set. */
  static List<RequestSpec> requests(CorpusPoint.Workload w, int stage, boolean allAtOnce, long seed) {
    int n = w.numPrompts();
    int[] in = lengths(n, fixed(w.inputTokens(), w.meanInputTokens()), w.meanInputTokens(), w,
        Sampling.subSeed(seed, "input"));
    int[] out = lengths(n, fixed(w.outputTokens(), w.meanOutputTokens()), w.meanOutputTokens(), w,
        Sampling.subSeed(seed, "output"));
    SplittableRandom gaps = new SplittableRandom(Sampling.subSeed(seed, "arrivals"));
    List<RequestSpec> list = new ArrayList<>(n);
    double t = 0;
    for (int i = 0; i < n; i++) {
      if (i > 0 && !allAtOnce) {
        t += (w.burstiness() == 1 ? Sampling.exponential(gaps, 1.0) : Sampling.gamma(gaps, w.burstiness(), 1.0))
            / (w.burstiness() * w.requestRate()) * 1e6;
      }
      int prefix = Math.min(w.prefixLen(), in[i] - 1);
      int[] tokens = PromptTokens.build(seed, prefix > 0 ? "shared" : "", prefix, i, in[i]);
      list.add(request(i, Math.round(t), tokens, out[i], prefix > 0 ? "shared" : "", prefix, stage));
    }
    return list;
  }

  /**
   * The length every request gets when the point asked for a fixed one: the measured mean when it
   * gave one too (requests that stopped early, which ones unknown), else the asked length; 0 when
   * the lengths vary.
   */
  static int fixed(int asked, double measuredMean) {
    if (asked <= 0) {
      return 0;
    }
    return Double.isFinite(measuredMean) ? Math.max(1, (int) Math.round(measuredMean)) : asked;
  }

  private static RequestSpec request(long id, long arrivalUs, int[] tokens, int out, String group, int prefix,
      int stage) {
    return new RequestSpec(id, arrivalUs, tokens, out, "", "", group, prefix, -1, 0, 0, stage);
  }

  /**
   * {@code n} lengths: {@code fixed} when it is above 0 (spread by the range ratio when one was
   * given), else log-normal around {@code mean}.
   */
  static int[] lengths(int n, int fixed, double mean, CorpusPoint.Workload w, long seed) {
    int[] out = new int[n];
    SplittableRandom r = new SplittableRandom(seed);
    if (fixed > 0) {
      double ratio = w.rangeRatio();
      double lo = fixed;
      double hi = fixed;
      if (Double.isFinite(ratio) && ratio > 0) {
        if (w.rangeRatioAroundMean()) {
          lo = Math.max(1, fixed * (1 - ratio));
          hi = fixed * (1 + ratio);
        } else if (ratio < 1) {
          lo = Math.max(1, fixed * ratio);
        }
      }
      for (int i = 0; i < n; i++) {
        out[i] = lo == hi ? fixed : (int) Math.round(lo + r.nextDouble() * (hi - lo));
      }
      return out;
    }
    double sigma = Math.sqrt(Math.log(1 + VARYING_CV * VARYING_CV));
    double mu = Math.log(mean) - sigma * sigma / 2;
    double[] raw = new double[n];
    double sum = 0;
    for (int i = 0; i < n; i++) {
      raw[i] = Math.min(8 * mean, Math.max(4, Math.exp(mu + sigma * Sampling.standardNormal(r))));
      sum += raw[i];
    }
    double scale = mean * n / sum;
    for (int i = 0; i < n; i++) {
      out[i] = Math.max(1, (int) Math.round(raw[i] * scale));
    }
    return out;
  }

  /** The latency benchmark: a warm-up batch, then the measured batch once the warm-up has ended. */
  static final class RepeatedBatch implements RequestSource {
    private final List<RequestSpec> warmUp = new ArrayList<>();
    private final int batch;
    private final int input;
    private final int output;
    private final boolean reuse;
    private final long seed;
    private int handed;
    private int finished;
    private long warmUpEndUs = -1;
    private int measuredHanded;

    RepeatedBatch(int batch, int input, int output, boolean reuse, long seed) {
      this.batch = batch;
      this.input = input;
      this.output = output;
      this.reuse = reuse;
      this.seed = seed;
      for (int i = 0; i < batch; i++) {
        warmUp.add(request(i, 0, PromptTokens.build(seed, "", 0, i, input), output, "", 0, 0));
      }
    }

    @Override
    public RequestSpec next() {
      if (handed < batch) {
        return warmUp.get(handed++);
      }
      if (warmUpEndUs < 0 || measuredHanded >= batch) {
        return null;
      }
      int i = measuredHanded++;
      long content = reuse ? i : batch + i;
      return request(batch + i, warmUpEndUs, PromptTokens.build(seed, "", 0, content, input), output, "", 0, 1);
    }

    @Override
    public boolean exhausted() {
      return measuredHanded >= batch;
    }

    @Override
    public List<RequestSpec> onFinished(RequestSpec request, RequestOutcome outcome, long timeUs) {
      if (request.stage() == 0 && ++finished == batch) {
        warmUpEndUs = timeUs;
      }
      return List.of();
    }
  }

  /** At most {@code slots} requests in flight; a request waits for a slot once its time has come. */
  static final class Gated implements RequestSource {
    private final List<RequestSpec> requests;
    private final int slots;
    private int next;

    Gated(List<RequestSpec> requests, int slots) {
      this.requests = requests;
      this.slots = slots;
    }

    @Override
    public RequestSpec next() {
      return next < slots ? requests.get(next++) : null;
    }

    @Override
    public boolean exhausted() {
      return next >= requests.size();
    }

    @Override
    public List<RequestSpec> onFinished(RequestSpec request, RequestOutcome outcome, long timeUs) {
      if (next >= requests.size()) {
        return List.of();
      }
      RequestSpec r = requests.get(next++);
      return List.of(r.withArrivalTimeUs(Math.max(timeUs, r.arrivalTimeUs())));
    }
  }
}
