package io.blis.engine.autoscale;

import io.blis.api.Autoscaler;
import io.blis.api.AutoscalerProvider;
import io.blis.api.ProviderContext;
import io.blis.engine.policy.Params;
import java.util.Locale;
import java.util.TreeMap;

/** The built-in autoscalers, also available by name ({@code hpa}, {@code saturation}, {@code schedule}). */
public final class Scalers {

  private Scalers() {}

  /** The metric a {@link #hpa} scaler averages over the ready replicas. */
  public enum Metric {
    /** Requests waiting in a replica's queue (vLLM's {@code num_requests_waiting}). */
    WAITING,
    /** Requests in a replica's batch ({@code num_requests_running}). */
    RUNNING,
    /** KV-cache use, 0 to 1 ({@code kv_cache_usage_perc}). */
    KV,
    /** Requests arriving per second per replica. */
    RATE,
    /** Mean TTFT of the requests finished over the interval, milliseconds (not per replica). */
    TTFT
  }

  /**
   * Kubernetes' Horizontal Pod Autoscaler on one metric: {@code desired = ceil(current x value /
   * target)}, where {@code value} is the metric's mean over the ready replicas, and no change while
   * {@code |value / target - 1|} is within {@code tolerance} (Kubernetes' default 0.1). The
   * stabilization windows and rate limits of HPA's behaviour are applied by the fleet around every
   * scaler.
   */
  public static Autoscaler hpa(Metric metric, double target, double tolerance) {
    if (!(target > 0) || !Double.isFinite(target)) {
      throw new IllegalArgumentException("hpa: target must be a finite number > 0, got " + target);
    }
    if (!(tolerance >= 0) || !Double.isFinite(tolerance)) {
      throw new IllegalArgumentException("hpa: tolerance must be a finite number >= 0, got " + tolerance);
    }
    return view -> {
      double value = switch (metric) {
        case WAITING -> view.meanWaiting();
        case RUNNING -> view.meanRunning();
        case KV -> view.meanKvUtilization();
        case RATE -> view.readyReplicas() == 0 ? 0 : view.arrivalRatePerS() / view.readyReplicas();
        case TTFT -> view.ttftMeanMs();
      };
      int current = view.currentReplicas();
      if (Double.isNaN(value)) {
        return current; // no sample this interval (no request finished): keep the replicas
      }
      double ratio = value / target;
      if (Math.abs(ratio - 1) <= tolerance) {
        return current;
      }
      // over the ready replicas: a replica still starting adds no load and no capacity yet
      int base = Math.max(1, view.readyReplicas());
      return (int) Math.ceil(base * ratio - 1e-9);
    };
  }

  /**
   * A saturation scaler in the manner of llm-d's and Go BLIS's: the Gateway API Inference
   * Extension's thresholds applied to the pool's means, {@code max(mean waiting / queueThreshold,
   * mean KV use / kvThreshold)} (a scaler sees means, not each replica, so this is the larger of
   * two means rather than GAIE's mean of per-replica maxima). One replica is added when that
   * figure, spread over the replicas still starting as well as the ready ones (x ready / (ready +
   * starting), as Go BLIS's analyzer after llm-d's adds the supply of loading instances), is at
   * or above {@code scaleUpAt}; one is removed when the figure is below {@code scaleDownBelow}; in
   * between nothing changes. Without the spreading, a pool saturated while its new replicas wait
   * minutes for nodes would add one a tick all that time.
   */
  public static Autoscaler saturation(double queueThreshold, double kvThreshold, double scaleUpAt,
      double scaleDownBelow) {
    if (!(kvThreshold > 0 && kvThreshold <= 1)) {
      throw new IllegalArgumentException("saturation: kv_threshold must be in (0, 1] (a fraction of the KV cache), got "
          + kvThreshold);
    }
    if (!(scaleDownBelow < scaleUpAt)) {
      throw new IllegalArgumentException("saturation: scale_down_below (" + scaleDownBelow
          + ") must be below scale_up_at (" + scaleUpAt + ")");
    }
    return view -> {
      double s = Math.max(view.meanWaiting() / queueThreshold, view.meanKvUtilization() / kvThreshold);
      // replicas still starting will take their share of the load: the saturation they will leave
      int ready = view.readyReplicas();
      int pool = ready + view.startingReplicas();
      double projected = pool == 0 ? s : s * ready / pool;
      if (projected >= scaleUpAt) {
        return view.currentReplicas() + 1;
      }
      return s < scaleDownBelow ? view.currentReplicas() - 1 : view.currentReplicas();
    };
  }

  /**
   * Replicas by hour of the simulated day (hour 0 starts at time 0, the day repeats): {@code
   * "0:2,8:6,18:3"} means 2 from midnight, 6 from 8:00, 3 from 18:00.
   */
  public static Autoscaler schedule(String spec) {
    TreeMap<Integer, Integer> byHour = parseSchedule(spec);
    return view -> {
      int hour = (int) ((view.nowUs() / 3_600_000_000L) % 24);
      var e = byHour.floorEntry(hour);
      return e != null ? e.getValue() : byHour.lastEntry().getValue();
    };
  }

  static TreeMap<Integer, Integer> parseSchedule(String spec) {
    TreeMap<Integer, Integer> out = new TreeMap<>();
    for (String part : spec.split(",")) {
      String p = part.trim();
      int colon = p.indexOf(':');
      try {
        if (colon <= 0) {
          throw new NumberFormatException();
        }
        int hour = Integer.parseInt(p.substring(0, colon).trim());
        int replicas = Integer.parseInt(p.substring(colon + 1).trim());
        if (hour < 0 || hour > 23 || replicas < 0) {
          throw new IllegalArgumentException("schedule: '" + p + "': the hour must be 0 to 23 and the replicas >= 0");
        }
        if (out.put(hour, replicas) != null) {
          throw new IllegalArgumentException("schedule: hour " + hour + " is given twice");
        }
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("schedule: expected HOUR:REPLICAS,..., e.g. 0:2,8:6,18:3, got '" + p + "'");
      }
    }
    return out;
  }

  /**
   * llm-d's workload variant autoscaler (its token-based saturation analyzer, as Go BLIS's {@code
   * autoscaler: analyzer:} configures it): a replica supplies {@code kvThreshold} of its KV cache
   * in tokens; the pool's demand is the KV tokens in use plus {@code avgInputTokens} per waiting
   * request. While demand / {@code scaleUpThreshold} exceeds the supply of the ready and starting
   * replicas, enough replicas are added to cover it; otherwise, with more than one ready replica,
   * the whole replicas of supply beyond demand / {@code scaleDownBoundary} are removed, provided
   * one fewer replica still covers that. A pool whose KV capacity is unknown keeps its replicas.
   */
  public static Autoscaler wva(double kvThreshold, double scaleUpThreshold, double scaleDownBoundary,
      double avgInputTokens) {
    if (!(kvThreshold > 0 && kvThreshold <= 1)) {
      throw new IllegalArgumentException("wva: kv_cache_threshold must be in (0, 1], got " + kvThreshold);
    }
    if (!(scaleDownBoundary < scaleUpThreshold)) {
      throw new IllegalArgumentException("wva: scale_down_boundary (" + scaleDownBoundary
          + ") must be below scale_up_threshold (" + scaleUpThreshold + ")");
    }
    return view -> {
      double perReplica = view.kvCapacityTokens() * kvThreshold;
      int ready = view.readyReplicas();
      if (perReplica <= 0 || ready == 0) {
        return view.currentReplicas();
      }
      double demand = ready * (view.meanKvUtilization() * view.kvCapacityTokens()
          + view.meanWaiting() * avgInputTokens);
      double supply = ready * perReplica;
      double required = demand / scaleUpThreshold - (supply + view.startingReplicas() * perReplica);
      if (required > 0) {
        return view.currentReplicas() + Math.max(1, (int) Math.ceil(required / perReplica));
      }
      double floor = demand / scaleDownBoundary;
      if (ready > 1 && supply - floor > 0 && supply - perReplica > floor) {
        int remove = Math.min(ready, Math.max(1, (int) Math.floor((supply - floor) / perReplica)));
        return view.currentReplicas() - remove;
      }
      return view.currentReplicas();
    };
  }

  /** {@code wva}: kv_cache_threshold, scale_up_threshold, scale_down_boundary, avg_input_tokens. */
  public static final class WvaProvider implements AutoscalerProvider {
    @Override
    public String name() {
      return "wva";
    }

    @Override
    public String description() {
      return "llm-d's variant autoscaler: KV-token supply against demand (Go BLIS's autoscaler analyzer)";
    }

    @Override
    public Autoscaler create(ProviderContext context) {
      Params p = Params.of(name(), context.options(), "kv_cache_threshold", "scale_up_threshold",
          "scale_down_boundary", "avg_input_tokens");
      return wva(p.positive("kv_cache_threshold", 0.8), p.positive("scale_up_threshold", 0.8),
          p.positive("scale_down_boundary", 0.4), p.positive("avg_input_tokens", 512));
    }
  }

  /** {@code hpa}: parameters metric (waiting, running, kv, rate, ttft), target, tolerance. */
  public static final class HpaProvider implements AutoscalerProvider {
    @Override
    public String name() {
      return "hpa";
    }

    @Override
    public String description() {
      return "Kubernetes HPA: ceil(replicas x metric / target) on waiting, running, kv, rate or ttft";
    }

    @Override
    public Autoscaler create(ProviderContext context) {
      Params p = Params.of(name(), context.options(), "metric", "target", "tolerance");
      String m = p.string("metric", "waiting").trim().toUpperCase(Locale.ROOT);
      Metric metric;
      try {
        metric = Metric.valueOf(m);
      } catch (IllegalArgumentException e) {
        throw p.bad("metric", p.string("metric", ""), "one of waiting, running, kv, rate, ttft");
      }
      double dflt = switch (metric) {
        case WAITING -> 5;
        case RUNNING -> 32;
        case KV -> 0.8;
        case RATE -> 10;
        case TTFT -> 500;
      };
      return hpa(metric, p.positive("target", dflt), p.number("tolerance", 0.1, 0));
    }
  }

  /** {@code saturation}: parameters queue_threshold, kv_threshold, scale_up_at, scale_down_below. */
  public static final class SaturationProvider implements AutoscalerProvider {
    @Override
    public String name() {
      return "saturation";
    }

    @Override
    public String description() {
      return "one replica up at GAIE saturation >= scale_up_at, one down below scale_down_below";
    }

    @Override
    public Autoscaler create(ProviderContext context) {
      Params p = Params.of(name(), context.options(), "queue_threshold", "kv_threshold", "scale_up_at",
          "scale_down_below");
      return saturation(p.positive("queue_threshold", 5), p.positive("kv_threshold", 0.8),
          p.positive("scale_up_at", 1.0), p.number("scale_down_below", 0.5, 0));
    }
  }

  /** {@code schedule}: parameter replicas, {@code HOUR:N,...}. */
  public static final class ScheduleProvider implements AutoscalerProvider {
    @Override
    public String name() {
      return "schedule";
    }

    @Override
    public String description() {
      return "replicas by hour of the simulated day, e.g. replicas=0:2,8:6,18:3";
    }

    @Override
    public Autoscaler create(ProviderContext context) {
      Params p = Params.of(name(), context.options(), "replicas");
      String spec = p.string("replicas", null);
      if (spec == null) {
        throw new IllegalArgumentException("schedule: parameter replicas is required, e.g. replicas=0:2,8:6,18:3");
      }
      return schedule(spec);
    }
  }
}
