package io.blis.latency.blackbox;

import io.blis.api.LatencyModel;
import io.blis.api.LatencyModelProvider;
import io.blis.api.ProviderContext;
import io.blis.latency.coeff.CoefficientFiles;
import io.blis.latency.coeff.CoefficientVectors;

/**
 * The {@code blackbox} latency model: a step costs a constant plus a cost per prefill token and
 * per decode request, with no knowledge of the model architecture or GPU.
 *
 * <pre>
 *   stepTime   = max(1, beta[0] + beta[1] x prefillTokens + beta[2] x decodeRequests)   us
 *   queueing   = alpha[0] + alpha[1] x inputTokens                                     us
 *   per output token  = alpha[2]                                                        us
 *   scheduling = scheduling_us[0] (default 0),  preemption = preemption_us[0] (default 0) us
 * </pre>
 *
 * {@code prefillTokens} is the sum of {@code newTokens} over requests in the PREFILL phase (cache
 * misses scheduled this step), {@code decodeRequests} the number of requests in the DECODE phase.
 * Vectors missing from the given coefficients come from the bundled defaults
 * ({@code coefficients/blackbox.yaml}: the upstream Qwen2.5-7B / H100 / TP1 row).
 */
public final class BlackboxProvider implements LatencyModelProvider {

  /** The name this model is selected by. */
  public static final String NAME = "blackbox";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String description() {
    return "linear in prefill tokens and decode requests (beta), queueing linear in input length"
        + " (alpha); no model or GPU knowledge";
  }

  @Override
  public LatencyModel create(ProviderContext context) {
    CoefficientVectors c =
        new CoefficientVectors(NAME, context.coefficients(), CoefficientFiles.bundled(NAME));
    return new BlackboxModel(
        c.nonNegative("beta", 3, 3),
        c.nonNegative("alpha", 3, 3),
        c.scalar("scheduling_us", 0.0),
        c.scalar("preemption_us", 0.0));
  }
}
