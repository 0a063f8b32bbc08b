package io.blis.engine.spec;

import io.blis.api.BatchView;
import io.blis.api.LatencyModel;
import io.blis.api.Phase;
import io.blis.api.RequestView;
import io.blis.latency.ForwardingLatencyModel;

/**
 * The target model's step plus its drafter's passes and the host's speculative work. A GPU drafter (EAGLE, EAGLE-3, MTP, Medusa, a
 * draft model) runs once over every token of the step (it needs its own state of the prompts and
 * of the tokens just verified) and then {@code K - 1} more times, one token for each request that
 * decodes next step, each pass one token further along; each pass costs {@link
 * LatencyModel#forwardPassTime} of the drafter's model. An n-gram drafter runs on the CPU and costs
 * no GPU time here.
 *
 * <p>The verification itself is the target's step: a decoding request's {@code K + 1} tokens are
 * in the batch the target model prices.
 */
public final class SpeculativeModel extends ForwardingLatencyModel {

  private final LatencyModel drafter;
  private final Speculator speculator;
  /** The host time of a drafter pass and of a step's bookkeeping, us. */
  private final long hostUs;
  private final NextTokens next = new NextTokens();

  /**
   * @param target the target model's latency model (with whatever host time it carries)
   * @param drafter the drafter's latency model, null for a CPU drafter (n-gram)
   * @param speculator the instance's speculator
   */
  public SpeculativeModel(LatencyModel target, LatencyModel drafter, Speculator speculator) {
    super(target);
    this.drafter = drafter;
    this.speculator = java.util.Objects.requireNonNull(speculator, "speculator");
    this.hostUs = Math.round(speculator.config().hostUsPerPass());
  }

  /** {@return the instance's speculator} */
  public Speculator speculator() {
    return speculator;
  }

  /** The speculator of an instance whose latency model is {@code model}, or null when it does not speculate. */
  public static Speculator speculatorOf(LatencyModel model) {
    return model instanceof SpeculativeModel s ? s.speculator : null;
  }

  /**
   * The target's step, plus, when some request of it decodes next step: the host's speculative
   * bookkeeping of the step ({@code h}), and the drafter's passes, each the larger of its GPU time
   * and {@code h} (the host launches a pass while the GPU runs the one before).
   */
  @Override
  public long stepTime(BatchView batch) {
    long target = delegate().stepTime(batch);
    next.over(batch);
    if (next.size() == 0) {
      return target; // nothing to draft for: a step of prefill chunks only
    }
    return target + hostUs + (drafter == null ? 0 : draftUs(batch));
  }

  /** The drafter's passes after a step of {@code batch}, in microseconds ({@link #next} set). */
  private long draftUs(BatchView batch) {
    long us = Math.max(hostUs, drafter.forwardPassTime(batch));
    for (int pass = 1; pass < speculator.config().tokens(); pass++) {
      next.pass = pass;
      us += Math.max(hostUs, drafter.forwardPassTime(next));
    }
    return us;
  }

  /**
   * The requests of a step that decode next step, one token each, {@link #pass} tokens past the
   * step's: what each further drafter pass runs over. Reused; no allocation per step.
   */
  private static final class NextTokens implements BatchView {
    private BatchView base;
    private int[] members = new int[64];
    private int size;
    int pass;
    private final View view = new View();

    void over(BatchView batch) {
      base = batch;
      size = 0;
      for (int i = 0, n = batch.size(); i < n; i++) {
        RequestView r = batch.get(i);
        boolean decodesNext = r.phase() == Phase.DECODE
            || (long) r.progressIndex() + r.newTokens() >= (long) r.inputTokens() + r.generatedTokens();
        if (decodesNext) {
          if (size == members.length) {
            members = java.util.Arrays.copyOf(members, size * 2);
          }
          members[size++] = i;
        }
      }
    }

    @Override
    public int size() {
      return size;
    }

    @Override
    public RequestView get(int index) {
      if (index < 0 || index >= size) {
        throw new IndexOutOfBoundsException(index);
      }
      view.r = base.get(members[index]);
      view.pass = pass;
      return view;
    }
  }

  /** One request as a further drafter pass sees it: one new token, its context one token on per pass. */
  private static final class View implements RequestView {
    RequestView r;
    int pass;

    @Override
    public long id() {
      return r.id();
    }

    @Override
    public long arrivalTimeUs() {
      return r.arrivalTimeUs();
    }

    @Override
    public int inputTokens() {
      return r.inputTokens();
    }

    @Override
    public int progressIndex() {
      return r.progressIndex() + r.newTokens() + pass - 1;
    }

    @Override
    public int newTokens() {
      return 1;
    }

    @Override
    public int generatedTokens() {
      return r.generatedTokens();
    }

    @Override
    public Phase phase() {
      return Phase.DECODE;
    }

    @Override
    public int priority() {
      return r.priority();
    }

    @Override
    public String sloClass() {
      return r.sloClass();
    }

    @Override
    public String tenant() {
      return r.tenant();
    }

    @Override
    public int preemptions() {
      return r.preemptions();
    }

    @Override
    public String adapter() {
      return r.adapter();
    }
  }
}
