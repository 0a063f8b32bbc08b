package io.blis.latency;

import io.blis.api.BatchView;
import io.blis.api.Phase;
import io.blis.api.RequestView;
import java.util.ArrayList;
import java.util.List;

/** Simple immutable test implementations of the SPI views. */
public final class Fixtures {

  private Fixtures() {}

  /** A request of the batch: prompt length, progress index and new tokens of this step. */
  public record Req(int inputTokens, int progressIndex, int newTokens) implements RequestView {
    @Override
    public long id() {
      return 0;
    }

    @Override
    public long arrivalTimeUs() {
      return 0;
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

  /** A prefill chunk of {@code newTokens} starting at {@code progressIndex}. */
  public static Req prefill(int inputTokens, int progressIndex, int newTokens) {
    return new Req(inputTokens, progressIndex, newTokens);
  }

  /** A decode step of a request with a context of {@code contextTokens} already computed. */
  public static Req decode(int inputTokens, int contextTokens) {
    return new Req(inputTokens, contextTokens, 1);
  }

  /** A batch over a list of requests. */
  public record Batch(List<Req> requests) implements BatchView {
    public Batch {
      requests = List.copyOf(requests);
    }

    public static Batch of(Req... rs) {
      return new Batch(List.of(rs));
    }

    public Batch with(Req r) {
      List<Req> l = new ArrayList<>(requests);
      l.add(r);
      return new Batch(l);
    }

    @Override
    public int size() {
      return requests.size();
    }

    @Override
    public RequestView get(int index) {
      return requests.get(index);
    }
  }
}
