package io.blis.engine;

/**
 * The bounds of the simulated clock (integer microseconds) and its overflow-checked arithmetic.
 * {@link Simulation#MAX_SIMULATED_TIME_US} and {@link Simulation#MAX_DELAY_US} are these bounds.
 */
public final class SimulatedTime {

  /**
   * Latest simulated time a run may reach at its inputs: 365 days, microseconds. Requests must
   * arrive by then, a request timeout and the horizon are at most this long. Far below where
   * microsecond arithmetic on a {@code long} overflows (about 292,000 years), so times built
   * from bounded inputs cannot overflow.
   */
  public static final long MAX_SIMULATED_TIME_US = io.blis.workload.RequestSpec.MAX_TIME_US;

  /**
   * Longest single delay: one hour, microseconds. Bounds the admission and routing latencies, and
   * every time a latency model gives (a step, a queueing time, a processing time per token,
   * scheduling or preemption) or a CPU KV block takes to load; a real deployment exceeds none of
   * these by orders of magnitude.
   */
  public static final long MAX_DELAY_US = 3_600_000_000L;

  private SimulatedTime() {}

  /**
   * {@code timeUs + delayUs} on the simulated clock. Inputs are bounded ({@link
   * #MAX_SIMULATED_TIME_US}, {@link #MAX_DELAY_US}) so that this cannot overflow; if it does, that
   * is a bug, and it fails here rather than running the clock backwards.
   */
  static long later(long timeUs, long delayUs) {
    long sum = timeUs + delayUs;
    if (((timeUs ^ sum) & (delayUs ^ sum)) < 0) {
      throw new IllegalStateException("simulated time overflow: " + timeUs + " us + " + delayUs + " us");
    }
    return sum;
  }

  /**
   * {@code us}, a time a latency model gave ({@code what}), when it is at most {@link
   * #MAX_DELAY_US}; larger is a model or coefficients no deployment has.
   */
  static long checkedDelay(long us, String what) {
    if (us > MAX_DELAY_US) {
      throw new IllegalArgumentException("latency model: " + what + " of " + us
          + " us exceeds the limit of " + MAX_DELAY_US + " us (one hour); check its coefficients");
    }
    return us;
  }
}
