package io.blis.workload.spec;

import io.blis.workload.RequestSpec;
import io.blis.workload.synthetic.ActiveWindow;
import io.blis.workload.synthetic.AdapterPopularity;
import io.blis.workload.synthetic.ArrivalProcess;
import io.blis.workload.synthetic.LengthDistribution;
import io.blis.workload.synthetic.LengthSpec;
import io.blis.workload.synthetic.SessionSpec;
import java.util.List;
import java.util.Map;

/**
 * Binding of a workload spec file. Every record validates itself in its constructor so errors
 * carry the line of the offending key.
 */
record SpecFile(
    Integer version,
    Long seed,
    Double aggregateRate,
    Long numRequests,
    Double horizonS,
    List<Double> rateByHour,
    List<ClientFile> clients) {

  /** {@link RequestSpec#MAX_TIME_US} in seconds (365 days): the longest timeout or think time. */
  static final long MAX_TIME_S = RequestSpec.MAX_TIME_US / 1_000_000;

  SpecFile {
    if (version != null && version != 1) {
      throw new IllegalArgumentException("version must be 1, got " + version);
    }
    boolean shares = clients == null || clients.stream().anyMatch(c -> c == null || (c.rate() == null
        && (c.session() == null || !c.session().closedLoopUsers())));
    if ((shares || aggregateRate != null)
        && (aggregateRate == null || !(aggregateRate > 0) || aggregateRate.isInfinite())) {
      throw new IllegalArgumentException(
          "aggregate_rate (requests per second over all clients) must be a positive number, got "
              + aggregateRate + (aggregateRate == null ? " (it may be left out only when every client"
              + " gives its own rate)" : ""));
    }
    if (aggregateRate != null && aggregateRate < ArrivalProcess.MIN_RATE_RPS) {
      throw new IllegalArgumentException("aggregate_rate must be at least "
          + String.format(java.util.Locale.ROOT, "%.3g", ArrivalProcess.MIN_RATE_RPS)
          + " requests per second (one per " + RequestSpec.MAX_TIME_WORDS
          + ", the latest simulated time), got " + aggregateRate);
    }
    if (numRequests != null && numRequests < 1) {
      throw new IllegalArgumentException("num_requests must be at least 1, got " + numRequests);
    }
    if (horizonS != null && (!(horizonS > 0) || horizonS > MAX_TIME_S)) {
      throw new IllegalArgumentException("horizon_s must be a positive number of seconds up to " + MAX_TIME_S + " ("
          + RequestSpec.MAX_TIME_WORDS + ", the simulated-time limit, as for --horizon-s), got " + horizonS);
    }
    if (numRequests == null && horizonS == null) {
      throw new IllegalArgumentException("set num_requests or horizon_s (or both) to bound the workload");
    }
    if (rateByHour != null) {
      io.blis.workload.synthetic.RateCurve.hourly(rateByHour);
    }
    if (clients == null || clients.isEmpty()) {
      throw new IllegalArgumentException("clients must list at least one client");
    }
    java.util.Set<String> ids = new java.util.HashSet<>();
    for (int i = 0; i < clients.size(); i++) {
      ClientFile c = clients.get(i);
      if (c == null) {
        throw new IllegalArgumentException("clients[" + i + "] is empty, expected a client (id: ...)");
      }
      if (!ids.add(c.id())) {
        throw new IllegalArgumentException("duplicate client id '" + c.id() + "'");
      }
    }
  }

  record ClientFile(
      String id,
      String preset,
      String tenant,
      String sloClass,
      Double rateFraction,
      Double rate,
      ArrivalFile arrival,
      LengthFile input,
      LengthFile output,
      String prefixGroup,
      Integer prefixLength,
      Double timeoutS,
      SessionFile session,
      List<WindowFile> lifecycle,
      List<Double> rateByHour,
      String model,
      String adapter,
      AdaptersFile adapters) {

    ClientFile {
      if (id == null || id.isBlank()) {
        throw new IllegalArgumentException("every client needs an id");
      }
      if (preset != null && !Presets.NAMES.contains(preset)) {
        throw new IllegalArgumentException(
            "unknown preset '" + preset + "', expected one of " + Presets.NAMES);
      }
      if (preset == null && (input == null || output == null)) {
        throw new IllegalArgumentException(
            "client " + id + " needs input and output distributions (or a preset)");
      }
      if (rateFraction != null && (!(rateFraction > 0) || rateFraction.isInfinite())) {
        throw new IllegalArgumentException("rate_fraction must be a positive number, got " + rateFraction);
      }
      if (rate != null && rateFraction != null) {
        throw new IllegalArgumentException("rate and rate_fraction exclude each other: rate is this"
            + " client's own requests per second, rate_fraction its share of aggregate_rate");
      }
      if (rate != null) {
        ArrivalProcess.requireRate("rate (requests per second)", rate);
      }
      if (session != null && session.closedLoopUsers()) {
        for (Object[] k : new Object[][] {{"rate", rate}, {"rate_fraction", rateFraction}, {"arrival", arrival},
            {"rate_by_hour", rateByHour}, {"lifecycle", lifecycle}}) {
          if (k[1] != null) {
            throw new IllegalArgumentException("client " + id + ": " + k[0] + " does not go with session.users"
                + " (closed-loop users send as fast as their requests complete, for the whole run)");
          }
        }
      }
      if (timeoutS != null && (!(timeoutS >= 0) || timeoutS > MAX_TIME_S)) {
        throw new IllegalArgumentException(
            "timeout_s must be in [0, " + MAX_TIME_S + "] seconds (" + RequestSpec.MAX_TIME_WORDS + "), got " + timeoutS);
      }
      if (prefixLength != null && (prefixLength < 0 || prefixLength >= RequestSpec.MAX_TOKENS)) {
        throw new IllegalArgumentException("prefix_length must be in [0, "
            + (RequestSpec.MAX_TOKENS - 1) + "] tokens (a prompt has at most "
            + RequestSpec.MAX_TOKENS + "), got " + prefixLength);
      }
      if (rateByHour != null) {
        io.blis.workload.synthetic.RateCurve.hourly(rateByHour);
      }
      if (lifecycle != null && lifecycle.contains(null)) {
        throw new IllegalArgumentException("lifecycle lists an empty window, expected {start_s, end_s}");
      }
      if (prefixLength != null && prefixLength > 0 && (prefixGroup == null || prefixGroup.isEmpty())) {
        throw new IllegalArgumentException("prefix_length needs a prefix_group");
      }
      if (sloClass != null && !io.blis.workload.synthetic.ClientSpec.SLO_CLASSES.contains(sloClass)) {
        throw new IllegalArgumentException("unknown slo_class '" + sloClass + "', expected one of "
            + io.blis.workload.synthetic.ClientSpec.SLO_CLASSES);
      }
      if (model != null && model.isBlank()) {
        throw new IllegalArgumentException("client " + id + ": model is empty; name the model its requests are for,"
            + " or leave model out for the deployment's model");
      }
      if (adapter != null && adapter.isBlank()) {
        throw new IllegalArgumentException("client " + id + ": adapter is empty; name the LoRA adapter its requests"
            + " use, or leave adapter out for the base model");
      }
      if (adapter != null && adapters != null) {
        throw new IllegalArgumentException("client " + id + ": adapter and adapters exclude each other:"
            + " adapter names one LoRA adapter for every request, adapters draws one for each request");
      }
      if (adapter != null && (adapter.contains(",") || adapter.contains("\"") || adapter.contains("\n")
          || adapter.contains("\r"))) {
        throw new IllegalArgumentException("client " + id + ": adapter '" + adapter + "' must not contain"
            + " commas, quotes or line breaks (traces store adapter names unquoted)");
      }
      if (adapters != null) {
        adapters.popularity(id);
      }
    }

    AdapterPopularity adapterPopularity() {
      return adapters == null ? AdapterPopularity.NONE : adapters.popularity(id);
    }

    double fraction() {
      return rateFraction == null ? 1.0 : rateFraction;
    }

    LengthDistribution inputDistribution() {
      return input != null ? input.distribution() : Presets.input(preset);
    }

    LengthDistribution outputDistribution() {
      return output != null ? output.distribution() : Presets.output(preset);
    }
  }

  /** {@code process}: poisson, constant, gamma or weibull; {@code cv} for gamma and weibull. */
  record ArrivalFile(String process, Double cv) {
    ArrivalFile {
      if (process == null) {
        throw new IllegalArgumentException("arrival.process is required: poisson, constant, gamma or weibull");
      }
      switch (process) {
        case "poisson", "constant" -> {
          if (cv != null) {
            throw new IllegalArgumentException("arrival process " + process + " takes no cv");
          }
        }
        case "gamma", "weibull" -> {
          if (cv == null) {
            throw new IllegalArgumentException("arrival process " + process + " needs cv");
          }
        }
        default -> throw new IllegalArgumentException(
            "unknown arrival process '" + process + "', expected poisson, constant, gamma or weibull");
      }
      process(process, cv, 1.0);
    }

    ArrivalProcess at(double rateRps) {
      return process(process, cv, rateRps);
    }

    private static ArrivalProcess process(String process, Double cv, double rate) {
      return switch (process) {
        case "poisson" -> new ArrivalProcess.Poisson(rate);
        case "constant" -> new ArrivalProcess.Constant(rate);
        case "gamma" -> new ArrivalProcess.Gamma(rate, cv);
        default -> new ArrivalProcess.Weibull(rate, cv);
      };
    }
  }

  /**
   * {@code type}: gaussian (mean, std, min, max), exponential (mean, min, max), lognormal (mu,
   * sigma, min, max), constant (value), empirical (probabilities: {length: probability}).
   */
  record LengthFile(
      String type,
      Double mean,
      Double std,
      Integer min,
      Integer max,
      Double mu,
      Double sigma,
      Integer value,
      Map<Integer, Double> probabilities,
      Double alpha,
      Double xm,
      Double mixWeight) {

    LengthFile {
      if (type == null) {
        throw new IllegalArgumentException("length distribution type is required: " + TYPES);
      }
      build(type, mean, std, min, max, mu, sigma, value, probabilities, alpha, xm, mixWeight);
    }

    static final String TYPES =
        "gaussian, exponential, lognormal, pareto_lognormal, constant or empirical";

    LengthDistribution distribution() {
      return build(type, mean, std, min, max, mu, sigma, value, probabilities, alpha, xm, mixWeight);
    }

    private static LengthDistribution build(String type, Double mean, Double std, Integer min,
        Integer max, Double mu, Double sigma, Integer value, Map<Integer, Double> probabilities,
        Double alpha, Double xm, Double mixWeight) {
      int lo = min == null ? 1 : min;
      int hi = max == null ? RequestSpec.MAX_TOKENS : max;
      if (!type.equals("pareto_lognormal")) {
        only(type, allowed(type), alpha, xm, mixWeight);
      }
      return switch (type) {
        case "gaussian" -> {
          only(type, "mean, std, min, max", mu, sigma, value, probabilities);
          yield new LengthSpec(required(type, "mean", mean), std == null ? 0 : std, lo, hi);
        }
        case "exponential" -> {
          only(type, "mean, min, max", std, mu, sigma, value, probabilities);
          yield new LengthDistribution.Exponential(required(type, "mean", mean), lo, hi);
        }
        case "lognormal" -> {
          only(type, "mu, sigma, min, max", mean, std, value, probabilities);
          yield new LengthDistribution.LogNormal(
              required(type, "mu", mu), required(type, "sigma", sigma), lo, hi);
        }
        case "pareto_lognormal" -> {
          only(type, "alpha, xm, mu, sigma, mix_weight, min, max", mean, std, value, probabilities);
          yield new LengthDistribution.ParetoLogNormal(required(type, "alpha", alpha),
              required(type, "xm", xm), required(type, "mu", mu), required(type, "sigma", sigma),
              required(type, "mix_weight", mixWeight), lo, hi);
        }
        case "constant" -> {
          only(type, "value", mean, std, min, max, mu, sigma, probabilities);
          if (value == null) {
            throw new IllegalArgumentException("constant length needs value");
          }
          yield new LengthDistribution.Constant(value);
        }
        case "empirical" -> {
          only(type, "probabilities", mean, std, min, max, mu, sigma, value);
          if (probabilities == null || probabilities.isEmpty()) {
            throw new IllegalArgumentException("empirical length needs probabilities: {length: probability, ...}");
          }
          int[] values = new int[probabilities.size()];
          double[] ps = new double[values.length];
          int i = 0;
          for (Map.Entry<Integer, Double> e : probabilities.entrySet()) {
            if (e.getValue() == null) {
              throw new IllegalArgumentException("empirical probability of length " + e.getKey() + " is missing");
            }
            values[i] = e.getKey();
            ps[i++] = e.getValue();
          }
          yield new LengthDistribution.Empirical(values, ps);
        }
        default -> throw new IllegalArgumentException(
            "unknown length distribution '" + type + "', expected " + TYPES);
      };
    }

    private static String allowed(String type) {
      return switch (type) {
        case "gaussian" -> "mean, std, min, max";
        case "exponential" -> "mean, min, max";
        case "lognormal" -> "mu, sigma, min, max";
        case "constant" -> "value";
        case "empirical" -> "probabilities";
        default -> "the keys of a known type (" + TYPES + ")";
      };
    }

    private static double required(String type, String key, Double v) {
      if (v == null) {
        throw new IllegalArgumentException(type + " length needs " + key);
      }
      return v;
    }

    private static void only(String type, String allowed, Object... others) {
      for (Object o : others) {
        if (o != null) {
          throw new IllegalArgumentException(type + " length takes only " + allowed);
        }
      }
    }
  }

  /**
   * A client's LoRA adapters and their popularity: {@code count} adapters named {@code prefix + k}
   * (prefix "adapter-" when left out) or the adapters {@code names}; {@code zipf} the popularity
   * exponent (1 when left out), {@code base_share} the share of requests naming none (0 when left
   * out). Checked where the client's id is known ({@link #popularity}).
   */
  record AdaptersFile(Integer count, List<String> names, String prefix, Double zipf, Double baseShare) {

    /**
     * The popularity these keys give.
     *
     * @throws IllegalArgumentException naming {@code client} and the key at fault
     */
    AdapterPopularity popularity(String client) {
      String where = "client " + client + ": adapters";
      if ((count == null) == (names == null)) {
        throw new IllegalArgumentException(where + (count == null
            ? " needs count (numbered adapters PREFIX0 to PREFIX<count-1>) or names (a list of adapters)"
            : ": count and names exclude each other (give one)"));
      }
      if (names != null && prefix != null) {
        throw new IllegalArgumentException(where + ": prefix goes with count, not with names");
      }
      double z = zipf == null ? AdapterPopularity.DEFAULT_ZIPF : zipf;
      double base = baseShare == null ? 0 : baseShare;
      try {
        return count != null
            ? AdapterPopularity.numbered(prefix == null ? AdapterPopularity.DEFAULT_PREFIX : prefix, count, z, base)
            : AdapterPopularity.named(names, z, base);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(where + "." + e.getMessage(), e);
      }
    }
  }

  /**
   * Multi-turn sessions: rounds, think time (s), context accumulation; or {@code users} closed-loop
   * users and their think time.
   */
  record SessionFile(Integer rounds, Double thinkTimeS, Boolean accumulateContext, Integer users) {
    SessionFile {
      if (users != null) {
        if (rounds != null || Boolean.TRUE.equals(accumulateContext)) {
          throw new IllegalArgumentException("session.users (closed-loop users, each sending its next request"
              + " think_time_s after the previous one completed) goes without rounds and accumulate_context");
        }
        if (users < 1 || users > SessionSpec.MAX_USERS) {
          throw new IllegalArgumentException("session.users must be in [1, " + SessionSpec.MAX_USERS + "], got "
              + users);
        }
      } else if (rounds == null) {
        throw new IllegalArgumentException("session.rounds (or users) is required");
      }
      if (thinkTimeS != null && (!(thinkTimeS >= 0) || thinkTimeS > MAX_TIME_S)) {
        throw new IllegalArgumentException(
            "think_time_s must be in [0, " + MAX_TIME_S + "] seconds (" + RequestSpec.MAX_TIME_WORDS + "), got " + thinkTimeS);
      }
      if (users == null) {
        spec(rounds, thinkTimeS, accumulateContext);
      }
    }

    SessionSpec spec() {
      return users != null ? SessionSpec.users(users, thinkTimeS == null ? 0 : Math.round(thinkTimeS * 1e6))
          : spec(rounds, thinkTimeS, accumulateContext);
    }

    boolean closedLoopUsers() {
      return users != null;
    }

    private static SessionSpec spec(int rounds, Double think, Boolean accumulate) {
      return new SessionSpec(
          rounds, think == null ? 0 : Math.round(think * 1e6), Boolean.TRUE.equals(accumulate));
    }
  }

  /** An activity window {@code [start_s, end_s)}. */
  record WindowFile(Double startS, Double endS) {
    WindowFile {
      if (startS == null || endS == null) {
        throw new IllegalArgumentException("a lifecycle window needs start_s and end_s");
      }
      window(startS, endS);
    }

    ActiveWindow window() {
      return window(startS, endS);
    }

    private static ActiveWindow window(double start, double end) {
      if (!Double.isFinite(start) || !Double.isFinite(end)) {
        throw new IllegalArgumentException("lifecycle window bounds must be finite");
      }
      return new ActiveWindow(Math.round(start * 1e6), Math.round(end * 1e6));
    }
  }
}
