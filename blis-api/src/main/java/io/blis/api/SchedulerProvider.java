package io.blis.api;

/**
 * Creates {@link Scheduler}s. Register an implementation in {@code
 * META-INF/services/io.blis.api.SchedulerProvider}.
 */
public interface SchedulerProvider extends NamedProvider {

  Scheduler create(ProviderContext context);
}
