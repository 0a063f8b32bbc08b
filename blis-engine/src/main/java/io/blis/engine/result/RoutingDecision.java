package io.blis.engine.result;

import java.util.List;

/**
 * One admission or routing decision of a decision trace ({@code --trace-level decisions}).
 *
 * @param kind {@code admission} or {@code routing}
 * @param requestId the request decided on
 * @param timeUs when the decision was taken
 * @param admitted for admission decisions, whether the request was admitted (true for routing)
 * @param reason the rejection reason of a rejected request, empty otherwise
 * @param chosen the instance the router picked, -1 for admission decisions
 * @param candidates every instance as the router saw it (routing decisions), by index
 * @param alternatives the indices of the best other candidates by estimated wait, at most {@code
 *     counterfactual-k}, best first
 * @param regretUs estimated wait at the chosen instance minus that at the best alternative, 0
 *     when none was better; -1 when no counterfactual was asked for
 */
public record RoutingDecision(String kind, long requestId, long timeUs, boolean admitted,
    String reason, int chosen, List<Candidate> candidates, List<Integer> alternatives,
    long regretUs) {

  public RoutingDecision {
    candidates = List.copyOf(candidates);
    alternatives = List.copyOf(alternatives);
  }

  /**
   * One candidate instance of a routing decision.
   *
   * @param instance its index
   * @param score the router's score (higher preferred), NaN when the router does not score
   * @param estimatedWaitUs how long the request would wait there before its prefill completes,
   *     estimated from the snapshot the router saw: (prompt tokens queued there + the request's
   *     uncached prompt tokens) / step token budget, rounded up, x the instance's recent step time
   */
  public record Candidate(int instance, double score, long estimatedWaitUs) {}
}
