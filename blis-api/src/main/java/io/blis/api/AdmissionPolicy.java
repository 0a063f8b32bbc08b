package io.blis.api;

/**
 * Decides, before routing, whether a request enters the cluster at all (a gateway's admission
 * control). A rejected request is finished by the engine with outcome {@code REJECTED} and counted
 * under the decision's reason; it is never silently dropped.
 *
 * <p>Called once per request, at its arrival time plus the cluster's admission latency, on the
 * engine's thread. Policies may keep state (a token bucket, say) but must be deterministic: the
 * same calls in the same order give the same decisions.
 */
public interface AdmissionPolicy {

  /**
   * Decides on {@code request}.
   *
   * @param request the arriving request, not yet routed
   * @param cluster the instances as the router would see them now (snapshots may be stale; no
   *     request is being routed, so {@link InstanceSnapshot#cachedPrefixTokens()} is 0)
   * @return {@link AdmissionDecision#ADMIT} or a rejection with its reason
   */
  AdmissionDecision admit(RequestView request, ClusterView cluster);
}
