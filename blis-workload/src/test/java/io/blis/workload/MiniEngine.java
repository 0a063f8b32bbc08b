package io.blis.workload;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.function.ToLongFunction;

/**
 * A stand-in for the engine in tests: serves every request in {@code serviceUs(request)}
 * microseconds with unlimited concurrency, follows the RequestSource protocol (one pulled request
 * ahead, null + !exhausted waits for completions, follow-ups from onFinished) and records each
 * request with its completion time.
 */
public final class MiniEngine {

  /** A served request and its completion time. */
  public record Served(RequestSpec request, long finishUs) {}

  private MiniEngine() {}

  public static List<Served> run(RequestSource source, ToLongFunction<RequestSpec> serviceUs) {
    return run(source, serviceUs, r -> {});
  }

  /** As {@link #run(RequestSource, ToLongFunction)}, telling {@code admitted} every request. */
  public static List<Served> run(RequestSource source, ToLongFunction<RequestSpec> serviceUs,
      java.util.function.Consumer<RequestSpec> admitted) {
    List<Served> served = new ArrayList<>();
    PriorityQueue<Served> running = new PriorityQueue<>(
        (a, b) -> a.finishUs() != b.finishUs()
            ? Long.compare(a.finishUs(), b.finishUs())
            : Long.compare(a.request().id(), b.request().id()));
    PriorityQueue<RequestSpec> followUps = new PriorityQueue<>(
        (a, b) -> a.arrivalTimeUs() != b.arrivalTimeUs()
            ? Long.compare(a.arrivalTimeUs(), b.arrivalTimeUs())
            : Long.compare(a.id(), b.id()));
    RequestSpec pending = source.next();
    long lastOpenArrival = 0;
    while (true) {
      long nextOpen = pending == null ? Long.MAX_VALUE : pending.arrivalTimeUs();
      long nextFollow = followUps.isEmpty() ? Long.MAX_VALUE : followUps.peek().arrivalTimeUs();
      long nextFinish = running.isEmpty() ? Long.MAX_VALUE : running.peek().finishUs();
      if (nextOpen == Long.MAX_VALUE && nextFollow == Long.MAX_VALUE && nextFinish == Long.MAX_VALUE) {
        if (!source.exhausted()) {
          throw new AssertionError("source waits but nothing is running");
        }
        return served;
      }
      if (nextFinish <= nextOpen && nextFinish <= nextFollow) {
        Served s = running.poll();
        served.add(s);
        followUps.addAll(source.onFinished(s.request(), RequestOutcome.COMPLETED, s.finishUs()));
        if (pending == null) {
          pending = source.next();
        }
      } else if (nextOpen <= nextFollow) {
        if (pending.arrivalTimeUs() < lastOpenArrival) {
          throw new AssertionError("open-loop arrivals decrease at " + pending);
        }
        lastOpenArrival = pending.arrivalTimeUs();
        admitted.accept(pending);
        running.add(new Served(pending, pending.arrivalTimeUs() + serviceUs.applyAsLong(pending)));
        pending = source.next();
      } else {
        RequestSpec f = followUps.poll();
        admitted.accept(f);
        running.add(new Served(f, f.arrivalTimeUs() + serviceUs.applyAsLong(f)));
      }
    }
  }
}
