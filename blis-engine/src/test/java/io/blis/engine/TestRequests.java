package io.blis.engine;

import io.blis.workload.RequestSpec;
import java.util.stream.IntStream;

/** Builders of request specs for tests. */
final class TestRequests {

  private TestRequests() {}

  static int[] tokens(int from, int count) {
    return IntStream.range(from, from + count).toArray();
  }

  static int[] concat(int[] a, int[] b) {
    int[] out = new int[a.length + b.length];
    System.arraycopy(a, 0, out, 0, a.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  /** A request with distinct token ids (no sharing with other ids). */
  static RequestSpec req(long id, long arrivalUs, int input, int output) {
    return RequestSpec.simple(id, arrivalUs, tokens((int) id * 1_000_000, input), output);
  }

  static RequestSpec withTimeout(RequestSpec r, long timeoutUs) {
    return new RequestSpec(r.id(), r.arrivalTimeUs(), r.promptTokens(), r.outputTokens(),
        r.sloClass(), r.tenant(), r.prefixGroup(), r.prefixLength(), r.sessionId(), r.round(),
        timeoutUs, r.stage());
  }

  static RequestSpec withStage(RequestSpec r, int stage) {
    return new RequestSpec(r.id(), r.arrivalTimeUs(), r.promptTokens(), r.outputTokens(),
        r.sloClass(), r.tenant(), r.prefixGroup(), r.prefixLength(), r.sessionId(), r.round(),
        r.timeoutUs(), stage);
  }
}
