package io.blis.engine.capacity;

import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.inferenceperf.InferencePerfProfile;
import io.blis.workload.inferenceperf.InferencePerfWorkload;
import io.blis.workload.inferenceperf.LoadStage;
import io.blis.workload.spec.WorkloadSpec;
import io.blis.workload.synthetic.ClientSpec;
import io.blis.workload.synthetic.LengthSpec;
import io.blis.workload.synthetic.SyntheticWorkload;
import io.blis.workload.trace.TraceReader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A workload shape whose rate is the variable of a capacity search: the same requests (lengths,
 * prefixes, sessions, arrival process) at any mean rate, for at least a given simulated time.
 */
public interface RateWorkload {

  /**
   * A fresh stream at {@code rateRps} requests per second that lasts about {@code durationS}
   * simulated seconds (a trace lasts as long as it does at that rate).
   */
  RequestSource at(double rateRps, double durationS);

  /** The workload in words. */
  String description();

  /** The default workload of {@code blis run}: Poisson arrivals, Gaussian lengths. */
  static RateWorkload poissonGaussian(LengthSpec input, LengthSpec output, int prefixTokens, long seed) {
    return new RateWorkload() {
      @Override
      public RequestSource at(double rate, double durationS) {
        return SyntheticWorkload.poissonGaussian(rate, count(rate, durationS), input, output, prefixTokens, seed);
      }

      @Override
      public String description() {
        return "poisson-gaussian, seed " + seed;
      }
    };
  }

  /** A preset ({@code chatbot}, ...). */
  static RateWorkload preset(String name, long seed) {
    WorkloadSpec.preset(name, 1, 1, seed); // fails now for an unknown name
    return new RateWorkload() {
      @Override
      public RequestSource at(double rate, double durationS) {
        return WorkloadSpec.preset(name, rate, count(rate, durationS), seed).source();
      }

      @Override
      public String description() {
        return "preset " + name + ", seed " + seed;
      }
    };
  }

  /**
   * A workload spec: its clients with their arrival processes, lengths and sessions, the whole
   * stream sped up or slowed down so that the clients' summed rate is the rate asked for (session
   * think times scale with it).
   */
  static RateWorkload spec(WorkloadSpec spec, String name) {
    for (ClientSpec c : spec.clients()) {
      if (c.session().closedLoopUsers()) {
        throw new IllegalArgumentException(name + ": client " + c.id() + " is closed-loop users (session.users,"
            + " Go BLIS's concurrency), which have no arrival rate for a capacity search to vary; run it with blis run");
      }
    }
    double nominal = spec.clients().stream().map(ClientSpec::arrival).mapToDouble(a -> a.rateRps()).sum();
    return new RateWorkload() {
      @Override
      public RequestSource at(double rate, double durationS) {
        WorkloadSpec longer = new WorkloadSpec(spec.seed(), spec.clients(), count(rate, durationS), Long.MAX_VALUE);
        return new TimeScaled(longer.source(), nominal / rate);
      }

      @Override
      public String description() {
        return "workload spec " + name + " (" + String.format(Locale.ROOT, "%.3g", nominal) + " req/s as written), seed " + spec.seed();
      }
    };
  }

  /**
   * A workload spec file in either format: its clients scaled as {@link #spec}, or for a Go BLIS
   * {@code inference_perf} block its profile as {@link #inferencePerf} with {@code seed}.
   */
  static RateWorkload specFile(io.blis.workload.spec.WorkloadFile f, String name, long seed) {
    return f.spec() != null ? spec(f.spec(), name) : inferencePerf(f.inferencePerf(), name, seed);
  }

  /** An inference-perf profile's data and timeout, as one load stage at the rate asked for. */
  static RateWorkload inferencePerf(InferencePerfProfile p, String name, long seed) {
    return new RateWorkload() {
      @Override
      public RequestSource at(double rate, double durationS) {
        InferencePerfProfile one = new InferencePerfProfile(p.data(), List.of(new LoadStage(rate, durationS)),
            p.stageIntervalS(), p.clientTimeoutS(), p.loadType(), p.multiTurnChat());
        return InferencePerfWorkload.synthetic(one, seed);
      }

      @Override
      public String description() {
        return "inference-perf profile " + name + " as one stage, seed " + seed;
      }
    };
  }

  /**
   * A BLIS trace, its arrival times scaled so that its mean rate (requests over the span of its
   * open-loop arrivals) is the rate asked for. The duration is the trace's own at that rate.
   */
  static RateWorkload trace(Path file) {
    long n = 0;
    long first = Long.MAX_VALUE;
    long last = Long.MIN_VALUE;
    try (RequestSource s = TraceReader.open(file)) {
      RequestSpec r;
      while ((r = s.next()) != null) {
        n++;
        first = Math.min(first, r.arrivalTimeUs());
        last = Math.max(last, r.arrivalTimeUs());
      }
    }
    if (n < 2 || last <= first) {
      throw new IllegalArgumentException(file + ": a trace needs at least two requests at different times to scale its rate");
    }
    double nominal = (n - 1) / ((last - first) / 1e6);
    long requests = n;
    return new RateWorkload() {
      @Override
      public RequestSource at(double rate, double durationS) {
        return new TimeScaled(TraceReader.open(file), nominal / rate);
      }

      @Override
      public String description() {
        return "trace " + file.getFileName() + " (" + requests + " requests, "
            + String.format(Locale.ROOT, "%.3g", nominal) + " req/s as recorded)";
      }
    };
  }

  /** Requests at {@code rate} for {@code durationS}, at least one. */
  static long count(double rate, double durationS) {
    return Math.max(1, (long) Math.ceil(rate * durationS));
  }

  /**
   * A source whose times run {@code factor} times as long: arrivals multiplied by it, the times
   * its delegate is told divided by it.
   */
  final class TimeScaled implements RequestSource {
    private final RequestSource delegate;
    private final double factor;

    TimeScaled(RequestSource delegate, double factor) {
      if (!(factor > 0) || !Double.isFinite(factor)) {
        throw new IllegalArgumentException("time scale must be positive, got " + factor);
      }
      this.delegate = delegate;
      this.factor = factor;
    }

    private long scale(long us) {
      double v = us * factor;
      if (v >= Long.MAX_VALUE / 4.0) {
        throw new IllegalArgumentException("scaling the workload's times by " + factor + " overflows the simulated clock");
      }
      return Math.round(v);
    }

    @Override
    public RequestSpec next() {
      RequestSpec r = delegate.next();
      return r == null ? null : r.withArrivalTimeUs(scale(r.arrivalTimeUs()));
    }

    @Override
    public boolean exhausted() {
      return delegate.exhausted();
    }

    @Override
    public List<RequestSpec> onFinished(RequestSpec request, RequestOutcome outcome, long timeUs) {
      List<RequestSpec> out = new ArrayList<>();
      for (RequestSpec f : delegate.onFinished(request, outcome, (long) Math.floor(timeUs / factor))) {
        out.add(f.withArrivalTimeUs(Math.max(timeUs, scale(f.arrivalTimeUs()))));
      }
      return out;
    }

    @Override
    public void close() {
      delegate.close();
    }
  }
}
