package io.blis.engine.sched;

import io.blis.api.RequestView;

/** The tie-break every ordering scheduler shares. */
final class TieBreak {

  private TieBreak() {}

  /**
   * {@code primary} first, then arrival time, then request id, so the order is total and
   * deterministic.
   */
  static int thenArrivalThenId(int primary, RequestView a, RequestView b) {
    if (primary != 0) {
      return primary;
    }
    int c = Long.compare(a.arrivalTimeUs(), b.arrivalTimeUs());
    return c != 0 ? c : Long.compare(a.id(), b.id());
  }
}
