package io.blis.bench;

import io.blis.api.BatchView;
import io.blis.api.Phase;
import io.blis.api.RequestView;
import java.util.SplittableRandom;

/**
 * A fixed batch for benchmarks: requests held in an array, indexed access without allocation.
 */
final class BenchBatch implements BatchView {

  /**
   * One scheduled request: prompt length, progress index and new tokens of this step (extended by
   * the routing benchmark with prompt block hashes).
   */
  static class Request implements RequestView {
    private final long id;
    private final int inputTokens;
    private final int progressIndex;
    private final int newTokens;

    Request(long id, int inputTokens, int progressIndex, int newTokens) {
      this.id = id;
      this.inputTokens = inputTokens;
      this.progressIndex = progressIndex;
      this.newTokens = newTokens;
    }

    @Override
    public long id() {
      return id;
    }

    @Override
    public long arrivalTimeUs() {
      return 0;
    }

    @Override
    public int inputTokens() {
      return inputTokens;
    }

    @Override
    public int progressIndex() {
      return progressIndex;
    }

    @Override
    public int newTokens() {
      return newTokens;
    }

    @Override
    public int generatedTokens() {
      return Math.max(0, progressIndex - inputTokens);
    }

    @Override
    public Phase phase() {
      return progressIndex < inputTokens ? Phase.PREFILL : Phase.DECODE;
    }

    @Override
    public int priority() {
      return 1;
    }

    @Override
    public String sloClass() {
      return "standard";
    }

    @Override
    public String tenant() {
      return "";
    }
  }

  private final Request[] requests;

  private BenchBatch(Request[] requests) {
    this.requests = requests;
  }

  /**
   * A mixed batch of {@code size} requests: {@code prefills} prefill chunks (prompts of 500 to
   * 3000 tokens, chunks of up to 512 tokens at varied progress) and decodes at contexts of 100 to
   * 4000 tokens, drawn with a fixed seed.
   */
  static BenchBatch mixed(int size, int prefills, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    Request[] rs = new Request[size];
    for (int i = 0; i < size; i++) {
      if (i < prefills) {
        int input = rnd.nextInt(500, 3000);
        int done = rnd.nextInt(0, input / 2);
        rs[i] = new Request(i, input, done, Math.min(512, input - done));
      } else {
        int input = rnd.nextInt(50, 2000);
        rs[i] = new Request(i, input, input + rnd.nextInt(50, 2000), 1);
      }
    }
    return new BenchBatch(rs);
  }

  @Override
  public int size() {
    return requests.length;
  }

  @Override
  public RequestView get(int index) {
    return requests[index];
  }
}
