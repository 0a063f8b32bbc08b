package io.blis.engine.result;

/**
 * Summary of the admission and routing decisions of a run with a decision trace.
 *
 * @param admissionDecisions requests the admission policy decided on
 * @param rejected requests it rejected
 * @param routingDecisions requests routed
 * @param counterfactualK alternatives considered per routing decision (0: no regret computed)
 * @param regretDecisions routing decisions with a positive regret
 * @param regret distribution of the regret over every routing decision, microseconds
 */
public record DecisionSummary(long admissionDecisions, long rejected, long routingDecisions,
    int counterfactualK, long regretDecisions, Distribution regret) {}
