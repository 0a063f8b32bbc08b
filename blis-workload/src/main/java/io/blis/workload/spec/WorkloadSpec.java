package io.blis.workload.spec;

import io.blis.workload.RequestSource;
import io.blis.workload.TextFiles;
import io.blis.workload.StrictYaml;
import io.blis.workload.synthetic.ArrivalProcess;
import io.blis.workload.synthetic.ClientSpec;
import io.blis.workload.synthetic.RateCurve;
import io.blis.workload.synthetic.SessionSpec;
import io.blis.workload.synthetic.SyntheticWorkload;
import io.blis.workload.synthetic.ActiveWindow;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A parsed workload spec (YAML): clients sharing an aggregate rate, with their arrival processes,
 * length distributions, prefix groups, SLO classes, tenants, timeouts, multi-turn sessions and
 * activity windows. Each client's rate is {@code aggregate_rate x rate_fraction / (sum of all
 * rate fractions)} requests per second. See docs/workloads.md for the format.
 *
 * @param seed seed of every random choice
 * @param clients the clients, each at its own rate
 * @param maxRequests cap on open-loop requests (session first rounds count, follow-ups do not);
 *     {@code Long.MAX_VALUE} when not set
 * @param horizonUs no request arrives after this time, microseconds; {@code Long.MAX_VALUE} when
 *     not set
 */
public record WorkloadSpec(long seed, List<ClientSpec> clients, long maxRequests, long horizonUs) {

  public WorkloadSpec {
    clients = List.copyOf(clients);
  }

  /** Reads and validates a spec file. */
  public static WorkloadSpec load(Path file) {
    return from(StrictYaml.load(file, SpecFile.class), file.toString());
  }

  /** Parses and validates spec text; {@code sourceName} names it in error messages. */
  public static WorkloadSpec parse(String text, String sourceName) {
    return from(StrictYaml.parse(text, sourceName, SpecFile.class), sourceName);
  }

  private static WorkloadSpec from(SpecFile f, String sourceName) {
    try {
      return from(f);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(sourceName + ": " + TextFiles.oneLine(e.getMessage()), e);
    }
  }

  private static boolean users(SpecFile.ClientFile c) {
    return c.session() != null && c.session().closedLoopUsers();
  }

  private static WorkloadSpec from(SpecFile f) {
    double total = 0;
    for (SpecFile.ClientFile c : f.clients()) {
      if (c.rate() == null && !users(c)) {
        total += c.fraction();
      }
    }
    List<ClientSpec> clients = new ArrayList<>();
    for (SpecFile.ClientFile c : f.clients()) {
      double rate = c.rate() != null ? c.rate() : users(c) ? 1 : f.aggregateRate() * c.fraction() / total;
      ArrivalProcess arrival;
      try {
        // closed-loop users have no arrival process: theirs is a placeholder
        arrival = c.arrival() == null || users(c) ? new ArrivalProcess.Poisson(rate) : c.arrival().at(rate);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("client " + c.id() + " (" + (c.rate() != null ? "rate"
            : "aggregate_rate x rate_fraction / sum of rate fractions") + " = " + rate
            + " requests/s): " + e.getMessage(), e);
      }
      List<ActiveWindow> windows = new ArrayList<>();
      if (c.lifecycle() != null) {
        for (SpecFile.WindowFile w : c.lifecycle()) {
          windows.add(w.window());
        }
      }
      clients.add(new ClientSpec(
          c.id(),
          c.tenant() == null ? "" : c.tenant(),
          c.sloClass() == null ? "standard" : c.sloClass(),
          arrival,
          c.inputDistribution(),
          c.outputDistribution(),
          c.prefixGroup() == null ? "" : c.prefixGroup(),
          c.prefixLength() == null ? 0 : c.prefixLength(),
          c.timeoutS() == null ? 0 : Math.round(c.timeoutS() * 1e6),
          c.session() == null ? SessionSpec.NONE : c.session().spec(),
          windows,
          c.rateByHour() != null ? RateCurve.hourly(c.rateByHour())
              : f.rateByHour() != null ? RateCurve.hourly(f.rateByHour()) : RateCurve.NONE,
          c.model() == null ? "" : c.model(),
          c.adapter() == null ? "" : c.adapter(),
          c.adapterPopularity()));
    }
    return new WorkloadSpec(
        f.seed() == null ? 0 : f.seed(),
        clients,
        f.numRequests() == null ? Long.MAX_VALUE : f.numRequests(),
        f.horizonS() == null ? Long.MAX_VALUE : Math.round(f.horizonS() * 1e6));
  }

  /**
   * One Poisson client at {@code rateRps} with the named preset's Gaussian lengths ({@code
   * chatbot}, {@code summarization}, {@code contentgen}, {@code multidoc}).
   */
  public static WorkloadSpec preset(String name, double rateRps, long numRequests, long seed) {
    if (!Presets.NAMES.contains(name)) {
      throw new IllegalArgumentException(
          "unknown workload preset '" + TextFiles.quote(name) + "', expected one of " + Presets.NAMES);
    }
    if (numRequests < 1) {
      throw new IllegalArgumentException("number of requests must be at least 1, got " + numRequests);
    }
    ClientSpec client = ClientSpec.simple(
        name, new ArrivalProcess.Poisson(rateRps), Presets.input(name), Presets.output(name));
    return new WorkloadSpec(seed, List.of(client), numRequests, Long.MAX_VALUE);
  }

  /** Names accepted by {@link #preset}. */
  public static List<String> presetNames() {
    return Presets.NAMES;
  }

  /** A fresh request stream of this spec (streaming: requests are generated as pulled). */
  public RequestSource source() {
    return SyntheticWorkload.of(clients, seed, maxRequests, horizonUs);
  }

  /** A fresh request stream with another seed. */
  public RequestSource source(long overrideSeed) {
    return SyntheticWorkload.of(clients, overrideSeed, maxRequests, horizonUs);
  }
}
