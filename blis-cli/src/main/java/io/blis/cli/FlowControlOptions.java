package io.blis.cli;

import io.blis.engine.Simulation;
import io.blis.engine.flow.FlowControl;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The gateway flow-control flags (a picocli mixin of the cluster flags), named and defaulted as
 * Go BLIS's: {@code --flow-control} turns the gateway queue on; the others tune it and need it.
 */
final class FlowControlOptions {

  @Option(names = "--flow-control",
      description = "Queue requests at the gateway by SLO class and send them to the router while the pool is not saturated"
          + " (the Gateway API Inference Extension's flow control); replaces the admission policy.")
  boolean enabled;

  @Option(names = "--saturation-detector", paramLabel = "utilization|concurrency|never",
      description = "With --flow-control: when the pool is saturated; never (the default, as in Go BLIS) holds nothing.")
  String detector;

  @Option(names = "--queue-depth-threshold", paramLabel = "N",
      description = "Utilization detector: waiting requests per instance that count as full (default: 5).")
  Double queueDepthThreshold;

  @Option(names = "--kv-cache-util-threshold", paramLabel = "F",
      description = "Utilization detector: KV-cache use (0-1] that counts as full (default: 0.8).")
  Double kvCacheUtilThreshold;

  @Option(names = "--max-concurrency", paramLabel = "N",
      description = "Concurrency detector: requests in flight per instance that count as full (default: 100).")
  Integer maxConcurrency;

  @Option(names = "--dispatch-order", paramLabel = "fifo|priority|slo-deadline",
      description = "Which queued request goes first: the earliest arrival (default), the most urgent SLO class, or the earliest TTFT deadline within it.")
  String dispatchOrder;

  @Option(names = "--fairness-policy", paramLabel = "global-strict|round-robin",
      description = "Within an SLO class (priority and slo-deadline orders): the earliest head (default) or the tenants in turn.")
  String fairness;

  @Option(names = "--per-band-capacity", paramLabel = "N",
      description = "Most requests queued per SLO class; 0 = no limit (default).")
  Integer perBandCapacity;

  @Option(names = "--max-gateway-queue-depth", paramLabel = "N",
      description = "Most requests queued in all; 0 = no limit (default). A request finding it full is rejected.")
  Integer maxQueueDepth;

  @Option(names = "--queue-shedding",
      description = "With a full queue, a request displaces the newest queued batch, sheddable or background request of a less urgent class.")
  boolean queueShedding;

  @Option(names = "--dispatch-tick-interval", paramLabel = "US",
      description = "Microseconds between dispatch attempts while requests are queued; 0 = the default, 1000.")
  Long dispatchTickUs;

  @Option(names = "--request-ttl", paramLabel = "US",
      description = "Longest a request may wait in the gateway queue, microseconds; then it is rejected. 0 = no limit (default).")
  Long requestTtlUs;

  @Option(names = "--usage-limit-threshold", paramLabel = "F",
      description = "Go BLIS: per-band saturation ceiling; only 1.0 (no ceiling, its default) is modelled here.")
  Double usageLimitThreshold;

  @Option(names = "--in-flight-eviction",
      description = "Go BLIS: evict running sheddable requests when saturated; not modelled here (refused).")
  boolean inFlightEviction;

  @Option(names = "--slo-targets", paramLabel = "CLASS=US,...",
      description = "TTFT target per SLO class in microseconds, for --dispatch-order slo-deadline, e.g. critical=100000,standard=500000.")
  String sloTargets;

  private FlowControl parsed;

  /** Checks the flags; a tuning flag without {@code --flow-control} is refused. */
  void validate(CommandLine cl) {
    boolean tuned = detector != null || queueDepthThreshold != null || kvCacheUtilThreshold != null
        || maxConcurrency != null || dispatchOrder != null || fairness != null || perBandCapacity != null
        || maxQueueDepth != null || queueShedding || dispatchTickUs != null || requestTtlUs != null
        || sloTargets != null || usageLimitThreshold != null || inFlightEviction;
    if (!enabled) {
      DeploymentOptions.require(cl, !tuned,
          "the gateway queue's flags (--saturation-detector, --dispatch-order, --max-gateway-queue-depth, ...) need --flow-control");
      return;
    }
    DeploymentOptions.require(cl, !inFlightEviction,
        "--in-flight-eviction (Go BLIS's eviction of running sheddable requests) is not modelled here");
    DeploymentOptions.require(cl, usageLimitThreshold == null || usageLimitThreshold == 1.0,
        "--usage-limit-threshold: only 1.0 (no per-band ceiling) is modelled here, got " + usageLimitThreshold);
    DeploymentOptions.require(cl, kvCacheUtilThreshold == null || (kvCacheUtilThreshold > 0 && kvCacheUtilThreshold <= 1),
        "--kv-cache-util-threshold must be in (0, 1] (a fraction of the KV cache), got " + kvCacheUtilThreshold);
    FlowControl d = FlowControl.DEFAULTS;
    try {
      parsed = new FlowControl(
          detector == null ? d.detector() : FlowControl.parse(FlowControl.Detector.class, detector, "--saturation-detector"),
          queueDepthThreshold == null ? d.queueDepthThreshold() : queueDepthThreshold,
          kvCacheUtilThreshold == null ? d.kvCacheUtilThreshold() : kvCacheUtilThreshold,
          maxConcurrency == null ? d.maxConcurrency() : maxConcurrency,
          dispatchOrder == null ? d.dispatchOrder()
              : FlowControl.parse(FlowControl.DispatchOrder.class, dispatchOrder, "--dispatch-order"),
          fairness == null ? d.fairness() : FlowControl.parse(FlowControl.Fairness.class, fairness, "--fairness-policy"),
          perBandCapacity == null ? d.perBandCapacity() : perBandCapacity,
          maxQueueDepth == null ? d.maxQueueDepth() : maxQueueDepth,
          queueShedding,
          dispatchTickUs == null || dispatchTickUs == 0 ? d.dispatchTickUs() : dispatchTickUs,
          requestTtlUs == null ? d.requestTtlUs() : requestTtlUs,
          sloTargets == null ? Map.of() : targets(sloTargets));
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(cl, e.getMessage().replace("flow control: ", "--flow-control: "));
    }
    requireTargetsApply(cl);
  }

  /**
   * Refuses {@code --slo-targets} that could change nothing: a class no request has, or targets
   * under a dispatch order that reads no deadline (only slo-deadline does).
   */
  private void requireTargetsApply(CommandLine cl) {
    if (parsed.sloTargetsUs().isEmpty()) {
      return;
    }
    java.util.List<String> classes = io.blis.workload.synthetic.ClientSpec.SLO_CLASSES;
    for (String c : parsed.sloTargetsUs().keySet()) {
      DeploymentOptions.require(cl, classes.contains(c), "--slo-targets: unknown SLO class '" + c + "'; known classes: "
          + String.join(", ", classes));
    }
    DeploymentOptions.require(cl, parsed.dispatchOrder() == FlowControl.DispatchOrder.SLO_DEADLINE,
        "--slo-targets has no effect with --dispatch-order " + parsed.dispatchOrder().label()
            + (dispatchOrder == null ? " (the default)" : "") + ": only slo-deadline orders the queue by the targets'"
            + " deadlines (give --dispatch-order slo-deadline, or leave out --slo-targets)");
  }

  /** {@code critical=100000,standard=500000} as a map; an error names the part that is wrong. */
  static Map<String, Long> targets(String s) {
    Map<String, Long> out = new LinkedHashMap<>();
    for (String part : s.split(",")) {
      String p = part.trim();
      int eq = p.indexOf('=');
      if (eq <= 0 || eq == p.length() - 1) {
        throw new IllegalArgumentException("--slo-targets: expected CLASS=MICROSECONDS, got '" + p + "'");
      }
      String cls = p.substring(0, eq).trim();
      long us;
      try {
        us = Long.parseLong(p.substring(eq + 1).trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("--slo-targets: " + cls + ": expected a whole number of microseconds, got '"
            + p.substring(eq + 1).trim() + "'");
      }
      if (us <= 0) {
        throw new IllegalArgumentException("--slo-targets: " + cls + ": the target must be > 0 us, got " + us);
      }
      if (out.put(cls, us) != null) {
        throw new IllegalArgumentException("--slo-targets: " + cls + " is given twice");
      }
    }
    return out;
  }

  /** Whether the gateway queue is on. */
  boolean enabled() {
    return enabled;
  }

  /** Puts the gateway queue on {@code b} when it is on. */
  void apply(Simulation.Builder b) {
    if (parsed != null) {
      b.flowControl(parsed);
    }
  }
}
