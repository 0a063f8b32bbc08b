package io.blis.api;

/**
 * A read-only, indexed view of the requests scheduled in one engine step, in the order the
 * scheduler formed them. Indexed access means no iterator is allocated on the hot path.
 *
 * <p>Only requests that received at least one new token this step are in the batch. The view is
 * valid only during the call that receives it.
 */
public interface BatchView {

  /** {@return the number of requests in the view} At least 1 in every view given to a plugin. */
  int size();

  /**
   * The request at {@code index}.
   *
   * @param index position in the view, from 0
   * @return the request's view, valid only during the current call
   * @throws IndexOutOfBoundsException if {@code index} is not in {@code [0, size())}
   */
  RequestView get(int index);

  /** {@return the sum of {@link RequestView#newTokens()} over the view} */
  default int totalNewTokens() {
    int sum = 0;
    for (int i = 0, n = size(); i < n; i++) {
      sum += get(i).newTokens();
    }
    return sum;
  }
}
