package io.blis.api;

/**
 * Creates {@link Scheduler}s. Register an implementation in {@code
 * META-INF/services/io.blis.api.SchedulerProvider}.
 */
public interface SchedulerProvider extends NamedProvider {

  /**
   * Builds the scheduler of a simulation. Called once; the engine may share the result between
   * all instances (see {@link Scheduler}).
   *
   * @param context the first pool's model, hardware, deployment, coefficients and options
   * @return a new scheduler
   * @throws IllegalArgumentException with a message naming the offending input when the context
   *     cannot be served
   */
  Scheduler create(ProviderContext context);
}
