package io.blis.engine.flow;

import io.blis.api.ClusterView;
import io.blis.workload.TextFiles;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Gateway flow control: a queue between admission and routing, as the Gateway API Inference
 * Extension's flow control (and llm-d, and Go BLIS's {@code --flow-control}) put in front of a
 * pool. An arriving request joins the queue of its priority band (its SLO class) instead of being
 * routed at once; one request leaves the queue for the router each time one joins and at every
 * dispatch tick while the queue is not empty, and only while the pool is not saturated. A request
 * that finds its band or the whole queue full is rejected (or, with {@code queueShedding}, takes
 * the place of a sheddable request of a less urgent band, which is shed); one that waits past the
 * request time-to-live expires, and one whose client deadline passes in the queue times out.
 *
 * @param detector how saturation is measured
 * @param queueDepthThreshold {@link Detector#UTILIZATION}: waiting requests per instance at which
 *     an instance counts as full (GAIE's default 5)
 * @param kvCacheUtilThreshold {@link Detector#UTILIZATION}: KV-cache use (0-1] at which an instance
 *     counts as full (GAIE's default 0.8)
 * @param maxConcurrency {@link Detector#CONCURRENCY}: requests in flight per instance at which
 *     the pool counts as full (default 100)
 * @param dispatchOrder which queued request leaves first
 * @param fairness which tenant's queue within a band, for the band-ordered dispatch orders
 * @param perBandCapacity most requests queued in one band, 0 for no limit
 * @param maxQueueDepth most requests queued in all, 0 for no limit
 * @param queueShedding whether a request finding the queue full may displace a sheddable request
 *     (batch, sheddable or background) of a less urgent band
 * @param dispatchTickUs time between dispatch ticks while the queue is not empty (llm-d's 1 ms)
 * @param requestTtlUs longest time a request may wait in the queue, 0 for no limit
 * @param sloTargetsUs TTFT target per SLO class, microseconds: the deadlines of {@link
 *     DispatchOrder#SLO_DEADLINE} (a class without one has no deadline)
 */
public record FlowControl(Detector detector, double queueDepthThreshold, double kvCacheUtilThreshold,
    int maxConcurrency, DispatchOrder dispatchOrder, Fairness fairness, int perBandCapacity,
    int maxQueueDepth, boolean queueShedding, long dispatchTickUs, long requestTtlUs,
    Map<String, Long> sloTargetsUs) {

  /** How the gateway decides the pool is saturated (saturation 1 or more holds the queue). */
  public enum Detector implements Labeled {
    /** Mean over instances of max(waiting / queue threshold, KV use / KV threshold). */
    UTILIZATION,
    /** Requests in flight / (instances x max concurrency). */
    CONCURRENCY,
    /** Never saturated: requests pass through the queue at once. */
    NEVER
  }


  /** Which queued request is dispatched next. */
  public enum DispatchOrder implements Labeled {
    /** The earliest arrival over every band. */
    FIFO,
    /** The most urgent band first; within it the fairness policy picks the tenant. */
    PRIORITY,
    /** As priority, and within a tenant's queue the earliest deadline (enqueue + class target). */
    SLO_DEADLINE
  }


  /** Which tenant's queue of a band goes next. */
  public enum Fairness implements Labeled {
    /** The queue whose head arrived first. */
    GLOBAL_STRICT,
    /** The tenants in turn, in the order of their names. */
    ROUND_ROBIN
  }


  /** A setting's name on the command line and in files: its constant's, lower case, with dashes. */
  public interface Labeled {
    /** The constant's name (an enum's). */
    String name();

    /** The name used on the command line and in files ({@code SLO_DEADLINE} is {@code slo-deadline}). */
    default String label() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
  }

  /**
   * The defaults of Go BLIS's flags (its code, f90a1e3: the detector {@code never}, so that the
   * queue holds nothing until a detector is chosen; thresholds 5 and 0.8; concurrency 100; fifo;
   * 1 ms ticks).
   */
  public static final FlowControl DEFAULTS = new FlowControl(Detector.NEVER, 5, 0.8, 100,
      DispatchOrder.FIFO, Fairness.GLOBAL_STRICT, 0, 0, false, 1000, 0, Map.of());

  /** The longest tick or time-to-live: one hour, the simulation's bound on every delay. */
  private static final long MAX_DELAY_US = 3_600_000_000L;

  public FlowControl {
    if (detector == null || dispatchOrder == null || fairness == null) {
      throw new IllegalArgumentException("flow control: detector, dispatch order and fairness must be given");
    }
    positive("queue depth threshold", queueDepthThreshold);
    if (!(kvCacheUtilThreshold > 0 && kvCacheUtilThreshold <= 1)) {
      throw new IllegalArgumentException("flow control: the KV-cache utilization threshold must be in (0, 1] (a fraction"
          + " of the KV cache), got " + kvCacheUtilThreshold);
    }
    if (maxConcurrency < 1) {
      throw new IllegalArgumentException("flow control: max concurrency must be at least 1, got " + maxConcurrency);
    }
    if (perBandCapacity < 0 || maxQueueDepth < 0) {
      throw new IllegalArgumentException("flow control: queue capacities must be >= 0 (0 for no limit), got "
          + perBandCapacity + " per band and " + maxQueueDepth + " in all");
    }
    if (dispatchTickUs < 1 || dispatchTickUs > MAX_DELAY_US) {
      throw new IllegalArgumentException("flow control: the dispatch tick must be 1 to " + MAX_DELAY_US
          + " us (one hour), got " + dispatchTickUs);
    }
    if (requestTtlUs < 0 || requestTtlUs > MAX_DELAY_US) {
      throw new IllegalArgumentException("flow control: the request TTL must be 0 (none) to " + MAX_DELAY_US
          + " us (one hour), got " + requestTtlUs);
    }
    TreeMap<String, Long> targets = new TreeMap<>();
    for (Map.Entry<String, Long> e : sloTargetsUs.entrySet()) {
      if (e.getValue() == null || e.getValue() <= 0) {
        throw new IllegalArgumentException("flow control: the SLO target of " + e.getKey()
            + " must be a positive number of microseconds, got " + e.getValue());
      }
      targets.put(e.getKey(), e.getValue());
    }
    sloTargetsUs = Collections.unmodifiableMap(targets);
  }

  private static void positive(String what, double v) {
    if (!(v > 0) || !Double.isFinite(v)) {
      throw new IllegalArgumentException("flow control: the " + what + " must be a finite number > 0, got " + v);
    }
  }

  /**
   * The pool's saturation as {@link #detector()} measures it from the routers' snapshots; 1 or
   * more holds the queue. A pool without instances is saturated.
   */
  public double saturation(ClusterView cluster) {
    int n = cluster.size();
    if (detector == Detector.NEVER) {
      return 0.0;
    }
    if (n == 0) {
      return 1.0;
    }
    if (detector == Detector.CONCURRENCY) {
      long inFlight = 0;
      for (int i = 0; i < n; i++) {
        inFlight += cluster.get(i).inFlight();
      }
      return (double) inFlight / ((double) n * maxConcurrency);
    }
    return io.blis.engine.policy.Admissions.gaieSaturation(cluster, queueDepthThreshold, kvCacheUtilThreshold);
  }

  /** The deadline key of a request of {@code sloClass} queued at {@code enqueuedUs}. */
  long deadlineUs(String sloClass, long enqueuedUs) {
    Long target = sloTargetsUs.get(sloClass);
    return target == null ? Long.MAX_VALUE : enqueuedUs + target;
  }

  /** One line describing the settings, for notes and reports. */
  public String describe() {
    String sat = switch (detector) {
      case UTILIZATION -> "utilization (queue " + trim(queueDepthThreshold) + ", KV " + trim(kvCacheUtilThreshold) + ")";
      case CONCURRENCY -> "concurrency (" + maxConcurrency + " per instance)";
      case NEVER -> "never";
    };
    return "saturation " + sat + ", dispatch " + dispatchOrder.label()
        + (dispatchOrder == DispatchOrder.FIFO ? "" : " / " + fairness.label())
        + ", tick " + dispatchTickUs + " us"
        + (perBandCapacity > 0 ? ", " + perBandCapacity + " per band" : "")
        + (maxQueueDepth > 0 ? ", " + maxQueueDepth + " in all" : "")
        + (queueShedding ? ", shedding" : "")
        + (requestTtlUs > 0 ? ", TTL " + requestTtlUs + " us" : "");
  }

  private static String trim(double v) {
    return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
  }

  /** The value of {@code name} among {@code type}'s labels, or an error naming them. */
  public static <E extends Enum<E> & Labeled> E parse(Class<E> type, String name, String what) {
    StringBuilder known = new StringBuilder();
    for (E e : type.getEnumConstants()) {
      if (e.label().equals(name.trim().toLowerCase(Locale.ROOT))) {
        return e;
      }
      known.append(known.length() == 0 ? "" : ", ").append(e.label());
    }
    throw new IllegalArgumentException(what + ": unknown value '" + TextFiles.quote(name) + "', expected one of " + known);
  }
}
