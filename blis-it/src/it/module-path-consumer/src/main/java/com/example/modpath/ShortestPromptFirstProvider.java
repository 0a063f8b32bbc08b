package com.example.modpath;

import io.blis.api.BatchView;
import io.blis.api.ProviderContext;
import io.blis.api.RequestView;
import io.blis.api.Scheduler;
import io.blis.api.SchedulerProvider;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Orders the waiting queue by prompt length, shortest first (ties in queue order); preempts the
 * last running request, as vLLM does. Selected by the name {@code shortest-prompt-first}.
 */
public final class ShortestPromptFirstProvider implements SchedulerProvider {

  /** Schedulers created. */
  public static final AtomicLong CREATED = new AtomicLong();
  /** Comparisons of two waiting requests. */
  public static final AtomicLong COMPARISONS = new AtomicLong();

  @Override
  public String name() {
    return "shortest-prompt-first";
  }

  @Override
  public Scheduler create(ProviderContext context) {
    CREATED.incrementAndGet();
    return new Scheduler() {
      @Override
      public boolean ordersWaitingQueue() {
        return true;
      }

      @Override
      public int compareWaiting(RequestView a, RequestView b) {
        COMPARISONS.incrementAndGet();
        return Integer.compare(a.inputTokens(), b.inputTokens());
      }

      @Override
      public int preemptionVictim(BatchView running) {
        return running.size() - 1;
      }
    };
  }
}
