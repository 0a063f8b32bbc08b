package io.blis.latency.fit;

import io.blis.api.BatchView;
import io.blis.api.Phase;
import io.blis.api.RequestView;
import java.util.List;

/**
 * The batch of a traced step as latency models see a batch: each request's scheduled tokens,
 * context length (computed tokens before the step) and phase, from its request snapshot or as
 * {@link BatchReconstruction} rebuilt it.
 */
public final class TracedBatch implements BatchView {

  private final List<TracedStep.Request> requests;
  private final View view = new View();

  public TracedBatch(TracedStep step) {
    this(step.requests());
  }

  /** The batch of these requests. */
  public TracedBatch(List<TracedStep.Request> requests) {
    this.requests = List.copyOf(requests);
  }

  @Override
  public int size() {
    return requests.size();
  }

  @Override
  public RequestView get(int index) {
    view.r = requests.get(index);
    return view;
  }

  /** One reused view (valid during the call that received it, as the SPI says). */
  private static final class View implements RequestView {
    TracedStep.Request r;

    @Override
    public long id() {
      return r.requestId().hashCode();
    }

    @Override
    public long arrivalTimeUs() {
      return 0;
    }

    @Override
    public int inputTokens() {
      return r.promptTokens();
    }

    @Override
    public int progressIndex() {
      return r.computedTokens();
    }

    @Override
    public int newTokens() {
      return r.scheduledTokens();
    }

    @Override
    public int generatedTokens() {
      return Math.max(0, r.outputTokens());
    }

    @Override
    public Phase phase() {
      return r.prefill() ? Phase.PREFILL : Phase.DECODE;
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
}
