package io.blis.engine.trace;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.latency.fit.TraceFit;
import io.blis.latency.physics.TrainedPhysicsCoefficients;
import java.util.List;
import java.util.Locale;

/**
 * The ground truth of the recovery tests and the check every coefficient {@code blis fit} writes
 * must pass: recovered, or reported as not determined and left at its starting value.
 */
final class FitRecovery {

  /** Relative tolerance of a recovered coefficient (3% step noise, a few thousand steps). */
  static final double TOLERANCE = 0.05;

  private FitRecovery() {}

  /**
   * The bundled defaults scaled so that every coefficient a trace can determine differs from its
   * start by at least 10% (a fit that moved nothing fails). The per-deployment constants
   * (per_layer_us, per_allreduce_us, per_moe_layer_us, sampling_us_per_kvocab and sampling_passes)
   * stay at the start: within one deployment a change in them is the same as a change of
   * per_step_us or per_request_us, so the truth would not be recoverable by any fit.
   */
  static double[] truth() {
    double[] truth = TrainedPhysicsCoefficients.defaults();
    double[] factors = {1.3, 1.2, 1.15, 1.25, 1.1, 1.2, 1.2, 1.2, 1, 1, 1.3, 0.8, 1, 1, 1};
    for (int k = 0; k < factors.length; k++) {
      truth[k] *= factors[k];
    }
    int a = TrainedPhysicsCoefficients.BETA_LENGTH;
    // alpha: queueing, scheduling, per output token, preemption (the start has 8224, 0, 0, 0)
    truth[a] = 5000;
    truth[a + 1] = 2500;
    truth[a + 2] = 40;
    truth[a + 3] = 3000;
    return truth;
  }

  /** Each coefficient, its truth, start and fit, and what the fit said of it. */
  static String report(double[] truth, double[] start, TraceFit.Outcome o) {
    double[] fitted = TrainedPhysicsCoefficients.toArray(o.coefficients());
    List<TrainedPhysicsCoefficients.Term> terms = TrainedPhysicsCoefficients.terms();
    StringBuilder r = new StringBuilder();
    for (int k = 0; k < terms.size(); k++) {
      r.append(String.format(Locale.ROOT, "%-22s truth %10.4f start %10.4f fit %10.4f %s%n", terms.get(k).name(),
          truth[k], start[k], fitted[k], o.notIdentified(k) == null ? "fitted" : "kept: " + o.notIdentified(k)));
    }
    return r.append(String.format(Locale.ROOT, "steps %d (%d from journeys), test MAPE %.2f%% r %.4f",
        o.stepsWithBatch(), o.stepsFromJourneys(), o.beta().testMapePct(), o.beta().testPearson())).toString();
  }

  /**
   * Every coefficient the fit writes is either within {@link #TOLERANCE} of the truth (alpha: of
   * the truth in whole microseconds, as the engine charges them, or within 1 us), or reported
   * as not determined, with a reason, and written as exactly its starting value.
   */
  static void assertEveryCoefficient(double[] truth, double[] start, TraceFit.Outcome o) {
    double[] fitted = TrainedPhysicsCoefficients.toArray(o.coefficients());
    String report = report(truth, start, o);
    int betas = TrainedPhysicsCoefficients.BETA_LENGTH;
    for (int k = 0; k < fitted.length; k++) {
      String why = o.notIdentified(k);
      if (why == null) {
        double expected = k < betas ? truth[k] : Math.floor(truth[k]);
        double tolerance = k < betas ? TOLERANCE * expected : Math.max(1.0, TOLERANCE * expected);
        assertThat(fitted[k]).as("%s fitted%n%s", TrainedPhysicsCoefficients.terms().get(k).name(), report)
            .isBetween(expected - tolerance, expected + tolerance);
      } else {
        assertThat(why).as(report).isNotBlank();
        assertThat(fitted[k]).as("%s kept%n%s", TrainedPhysicsCoefficients.terms().get(k).name(), report)
            .isEqualTo(start[k]);
      }
    }
  }
}
