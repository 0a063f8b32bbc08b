package io.blis.api;

/**
 * A read-only, indexed view of the requests scheduled in one engine step, in the order the
 * scheduler formed them. Indexed access means no iterator is allocated on the hot path.
 *
 * <p>Only requests that received at least one new token this step are in the batch. The view is
 * valid only during the call that receives it.
 */
public interface BatchView {

  /** Number of requests in the step. */
  int size();

  /**
   * The request at {@code index}.
   *
   * @throws IndexOutOfBoundsException if {@code index} is not in {@code [0, size())}
   */
  RequestView get(int index);

  /** Sum of {@link RequestView#newTokens()} over the batch. */
  default int totalNewTokens() {
    int sum = 0;
    for (int i = 0, n = size(); i < n; i++) {
      sum += get(i).newTokens();
    }
    return sum;
  }
}
