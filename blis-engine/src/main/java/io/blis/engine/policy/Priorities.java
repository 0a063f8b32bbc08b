package io.blis.engine.policy;

import io.blis.api.PriorityPolicy;
import io.blis.api.PriorityPolicyProvider;
import io.blis.api.ProviderContext;
import io.blis.api.RequestView;

/** The built-in priority policies (lower is more urgent, as in vLLM), also available by name. */
public final class Priorities {

  /** Priority of the least urgent SLO class (background). */
  public static final int LEAST_URGENT = 7;

  private Priorities() {}

  /**
   * vLLM priority of an SLO class: critical 0, standard 1, batch 5, sheddable 6, background 7;
   * any other class counts as standard.
   */
  public static int sloClassPriority(String sloClass) {
    return switch (sloClass) {
      case "critical" -> 0;
      case "batch" -> 5;
      case "sheddable" -> 6;
      case "background" -> LEAST_URGENT;
      default -> 1;
    };
  }

  /**
   * {@code slo-based}: the SLO class's priority; with {@code agingMs > 0} a request that is not
   * critical gains one level per {@code agingMs} of age, never past 1 (critical first, then age).
   */
  public static PriorityPolicy sloBased(double agingMs) {
    if (!(agingMs >= 0) || !Double.isFinite(agingMs)) {
      throw new IllegalArgumentException("slo-based: aging must be >= 0 ms, got " + agingMs);
    }
    if (agingMs == 0) {
      return (request, nowUs) -> sloClassPriority(request.sloClass());
    }
    double agingUs = agingMs * 1000.0;
    return new PriorityPolicy() {
      @Override
      public int priority(RequestView request, long nowUs) {
        int base = sloClassPriority(request.sloClass());
        if (base <= 1) {
          return base;
        }
        long levels = (long) Math.floor(Math.max(0, nowUs - request.arrivalTimeUs()) / agingUs);
        return (int) Math.max(1, base - levels);
      }

      @Override
      public boolean timeDependent() {
        return true;
      }
    };
  }

  /** {@code constant}: every request gets {@code value}; priority-fcfs becomes arrival order. */
  public static PriorityPolicy constant(int value) {
    return (request, nowUs) -> value;
  }

  /** {@code inverted} (pathological): background most urgent, critical least. */
  public static PriorityPolicy inverted() {
    return (request, nowUs) -> LEAST_URGENT - sloClassPriority(request.sloClass());
  }

  /** Provides {@code slo-based}; parameter aging_ms (0). */
  public static final class SloBasedProvider implements PriorityPolicyProvider {
    @Override
    public String name() {
      return "slo-based";
    }

    @Override
    public String description() {
      return "SLO class priority (critical 0 .. background 7); aging_ms > 0 promotes waiting requests";
    }

    @Override
    public PriorityPolicy create(ProviderContext context) {
      return sloBased(Params.of(name(), context.options(), "aging_ms").number("aging_ms", 0, 0));
    }
  }

  /** Provides {@code constant}; parameter value (1). */
  public static final class ConstantProvider implements PriorityPolicyProvider {
    @Override
    public String name() {
      return "constant";
    }

    @Override
    public String description() {
      return "the same priority for every request";
    }

    @Override
    public PriorityPolicy create(ProviderContext context) {
      return constant(Params.of(name(), context.options(), "value").integer("value", 1, Integer.MIN_VALUE));
    }
  }

  /** Provides {@code inverted}. */
  public static final class InvertedProvider implements PriorityPolicyProvider {
    @Override
    public String name() {
      return "inverted";
    }

    @Override
    public java.util.List<String> aliases() {
      return java.util.List.of("inverted-slo"); // Go BLIS's name
    }

    @Override
    public String description() {
      return "pathological: background most urgent, critical least";
    }

    @Override
    public PriorityPolicy create(ProviderContext context) {
      Params.of(name(), context.options());
      return inverted();
    }
  }
}
