package io.blis.engine.validate;

import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSpec;
import io.blis.workload.RequestSource;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Passes on only the first {@code limit} requests of each load stage of another source (the
 * subsample calibration simulates). Dropped requests are reported to the inner source as
 * completed at their own arrival time, so a stage barrier of the inner source never waits for a
 * request that was not simulated.
 */
final class FirstPerStageSource implements RequestSource {

  private final RequestSource inner;
  private final int limit;
  private final Map<Integer, Integer> seen = new HashMap<>();
  private long clockUs;

  FirstPerStageSource(RequestSource inner, int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("requests per stage must be at least 1, got " + limit);
    }
    this.inner = inner;
    this.limit = limit;
  }

  @Override
  public RequestSpec next() {
    while (true) {
      RequestSpec r = inner.next();
      if (r == null) {
        return null;
      }
      int n = seen.merge(r.stage(), 1, Integer::sum);
      if (n <= limit) {
        return r;
      }
      clockUs = Math.max(clockUs, r.arrivalTimeUs());
      inner.onFinished(r, RequestOutcome.COMPLETED, clockUs);
    }
  }

  @Override
  public boolean exhausted() {
    return inner.exhausted();
  }

  @Override
  public List<RequestSpec> onFinished(RequestSpec request, RequestOutcome outcome, long timeUs) {
    clockUs = Math.max(clockUs, timeUs);
    return inner.onFinished(request, outcome, timeUs);
  }

  @Override
  public void close() {
    inner.close();
  }
}
