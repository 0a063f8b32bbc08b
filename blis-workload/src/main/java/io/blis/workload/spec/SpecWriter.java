package io.blis.workload.spec;

import io.blis.workload.StrictYaml;
import io.blis.workload.synthetic.ActiveWindow;
import io.blis.workload.synthetic.AdapterPopularity;
import io.blis.workload.synthetic.ArrivalProcess;
import io.blis.workload.synthetic.ClientSpec;
import io.blis.workload.synthetic.LengthDistribution;
import io.blis.workload.synthetic.LengthSpec;
import java.math.BigDecimal;
import java.util.List;

/**
 * Writes a {@link WorkloadSpec} as this project's spec YAML, which {@link WorkloadSpec#load} reads
 * back to the same clients: every client gets its own {@code rate} (so no share is recomputed),
 * numbers are written in full precision and times as exact decimal seconds.
 */
public final class SpecWriter {

  private SpecWriter() {}

  /**
   * The spec as YAML, after {@code header} (comment lines, each written with a leading "# "; may
   * be empty).
   */
  public static String toYaml(WorkloadSpec spec, List<String> header) {
    StringBuilder y = new StringBuilder(StrictYaml.comments(header));
    y.append("seed: ").append(spec.seed()).append('\n');
    if (spec.maxRequests() != Long.MAX_VALUE) {
      y.append("num_requests: ").append(spec.maxRequests()).append('\n');
    }
    if (spec.horizonUs() != Long.MAX_VALUE) {
      y.append("horizon_s: ").append(seconds(spec.horizonUs())).append('\n');
    }
    y.append("clients:\n");
    for (ClientSpec c : spec.clients()) {
      y.append("  - id: ").append(StrictYaml.quote(c.id())).append('\n');
      if (!c.tenant().isEmpty()) {
        y.append("    tenant: ").append(StrictYaml.quote(c.tenant())).append('\n');
      }
      y.append("    slo_class: ").append(c.sloClass()).append('\n');
      if (!c.model().isEmpty()) {
        y.append("    model: ").append(StrictYaml.quote(c.model())).append('\n');
      }
      if (!c.adapter().isEmpty()) {
        y.append("    adapter: ").append(StrictYaml.quote(c.adapter())).append('\n');
      }
      if (!c.adapters().isNone()) {
        y.append("    adapters: ").append(adapters(c.adapters())).append('\n');
      }
      if (!c.session().closedLoopUsers()) {
        y.append("    rate: ").append(c.arrival().rateRps()).append('\n');
        y.append("    arrival: ").append(arrival(c.arrival())).append('\n');
      }
      y.append("    input: ").append(length(c.input())).append('\n');
      y.append("    output: ").append(length(c.output())).append('\n');
      if (!c.prefixGroup().isEmpty()) {
        y.append("    prefix_group: ").append(StrictYaml.quote(c.prefixGroup())).append('\n');
        y.append("    prefix_length: ").append(c.prefixLength()).append('\n');
      }
      if (c.timeoutUs() > 0) {
        y.append("    timeout_s: ").append(seconds(c.timeoutUs())).append('\n');
      }
      if (c.session().closedLoopUsers()) {
        y.append("    session: {users: ").append(c.session().users()).append(", think_time_s: ")
            .append(seconds(c.session().thinkTimeUs())).append("}\n");
      } else if (c.session().multiTurn()) {
        y.append("    session: {rounds: ").append(c.session().rounds()).append(", think_time_s: ")
            .append(seconds(c.session().thinkTimeUs())).append(", accumulate_context: ")
            .append(c.session().accumulateContext()).append("}\n");
      }
      if (c.curve().varies()) {
        y.append("    rate_by_hour: [");
        java.util.List<Double> m = c.curve().multipliers();
        for (int h = 0; h < m.size(); h++) {
          y.append(h == 0 ? "" : ", ").append(m.get(h));
        }
        y.append("]\n");
      }
      if (!c.windows().isEmpty()) {
        y.append("    lifecycle:\n");
        for (ActiveWindow w : c.windows()) {
          y.append("      - {start_s: ").append(seconds(w.startUs())).append(", end_s: ")
              .append(seconds(w.endUs())).append("}\n");
        }
      }
    }
    return y.toString();
  }

  /** Microseconds as exact decimal seconds ("1.5", "3600"). */
  static String seconds(long us) {
    return BigDecimal.valueOf(us, 6).stripTrailingZeros().toPlainString();
  }

  /** The popularity's keys, the defaults too (base_share only when some requests name none). */
  private static String adapters(AdapterPopularity a) {
    StringBuilder b = new StringBuilder("{");
    if (a.isNumbered()) {
      b.append("count: ").append(a.count()).append(", prefix: ").append(StrictYaml.quote(a.prefix()));
    } else {
      b.append("names: [");
      for (int k = 0; k < a.count(); k++) {
        b.append(k == 0 ? "" : ", ").append(StrictYaml.quote(a.name(k)));
      }
      b.append(']');
    }
    b.append(", zipf: ").append(a.zipf());
    if (a.baseShare() > 0) {
      b.append(", base_share: ").append(a.baseShare());
    }
    return b.append('}').toString();
  }

  private static String arrival(ArrivalProcess a) {
    if (a instanceof ArrivalProcess.Gamma g) {
      return "{process: gamma, cv: " + g.cv() + "}";
    }
    if (a instanceof ArrivalProcess.Weibull w) {
      return "{process: weibull, cv: " + w.cv() + "}";
    }
    return a instanceof ArrivalProcess.Poisson ? "{process: poisson}" : "{process: constant}";
  }

  private static String length(LengthDistribution d) {
    if (d instanceof LengthSpec g) {
      return "{type: gaussian, mean: " + g.mean() + ", std: " + g.stdev() + ", min: " + g.min()
          + ", max: " + g.max() + "}";
    }
    if (d instanceof LengthDistribution.Exponential e) {
      return "{type: exponential, mean: " + e.mean() + ", min: " + e.min() + ", max: " + e.max() + "}";
    }
    if (d instanceof LengthDistribution.LogNormal l) {
      return "{type: lognormal, mu: " + l.mu() + ", sigma: " + l.sigma() + ", min: " + l.min()
          + ", max: " + l.max() + "}";
    }
    if (d instanceof LengthDistribution.ParetoLogNormal p) {
      return "{type: pareto_lognormal, alpha: " + p.alpha() + ", xm: " + p.xm() + ", mu: " + p.mu()
          + ", sigma: " + p.sigma() + ", mix_weight: " + p.mixWeight() + ", min: " + p.min()
          + ", max: " + p.max() + "}";
    }
    if (d instanceof LengthDistribution.Constant c) {
      return "{type: constant, value: " + c.value() + "}";
    }
    return empirical((LengthDistribution.Empirical) d);
  }

  /** Probabilities as the differences of the cumulative ones (they sum to 1). */
  private static String empirical(LengthDistribution.Empirical e) {
    int[] values = e.values();
    double[] cdf = e.probabilities();
    StringBuilder b = new StringBuilder("{type: empirical, probabilities: {");
    double prev = 0;
    for (int i = 0; i < values.length; i++) {
      // 15 significant digits give back the probabilities as written (0.3, not 0.30000000000000004)
      b.append(i == 0 ? "" : ", ").append(values[i]).append(": ").append(new BigDecimal(cdf[i] - prev)
          .round(new java.math.MathContext(15)).stripTrailingZeros().toPlainString());
      prev = cdf[i];
    }
    return b.append("}}").toString();
  }
}
