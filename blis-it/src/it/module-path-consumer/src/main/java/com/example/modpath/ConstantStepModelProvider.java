package com.example.modpath;

import io.blis.api.BatchView;
import io.blis.api.LatencyModel;
import io.blis.api.LatencyModelProvider;
import io.blis.api.ProviderContext;
import io.blis.api.RequestView;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A latency model whose every engine step takes the same time: {@code step_us} (an option,
 * default 2,000 us) whatever the batch. Selected by the name {@code constant-step}.
 */
public final class ConstantStepModelProvider implements LatencyModelProvider {

  /** Latency models created (one per simulated instance). */
  public static final AtomicLong CREATED = new AtomicLong();
  /** Engine steps timed, over all instances. */
  public static final AtomicLong STEPS = new AtomicLong();

  public static final long QUEUEING_US = 100;
  public static final long SCHEDULING_US = 300;
  public static final long PER_TOKEN_US = 10;

  @Override
  public String name() {
    return "constant-step";
  }

  @Override
  public String description() {
    return "every step takes step_us (default 2000 us)";
  }

  @Override
  public LatencyModel create(ProviderContext context) {
    long stepUs = Long.parseLong(context.option("step_us").orElse("2000"));
    CREATED.incrementAndGet();
    return new ConstantStep(stepUs);
  }

  private static final class ConstantStep implements LatencyModel {
    private final long stepUs;

    ConstantStep(long stepUs) {
      this.stepUs = stepUs;
    }

    @Override
    public long stepTime(BatchView batch) {
      STEPS.incrementAndGet();
      return stepUs;
    }

    @Override
    public long queueingTime(RequestView request) {
      return QUEUEING_US;
    }

    @Override
    public long outputTokenProcessingTime() {
      return PER_TOKEN_US;
    }

    @Override
    public long schedulingProcessingTime() {
      return SCHEDULING_US;
    }

    @Override
    public long preemptionProcessingTime() {
      return 0;
    }
  }
}
