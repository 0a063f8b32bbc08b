package io.blis.engine;

import io.blis.api.LatencyModel;
import io.blis.api.LatencyModelProvider;
import io.blis.api.ProviderContext;

/** A latency model that exists only in test sources, registered through META-INF/services. */
public final class TestPluginProvider implements LatencyModelProvider {

  @Override
  public String name() {
    return "test-fixed-step";
  }

  @Override
  public String description() {
    return "every step takes the 'step_us' option (default 777) microseconds";
  }

  @Override
  public LatencyModel create(ProviderContext context) {
    long stepUs = Long.parseLong(context.option("step_us").orElse("777"));
    return LinearTestModel.constant(stepUs);
  }
}
