package io.blis.api;

import java.util.Map;
import java.util.Optional;

/**
 * Everything a provider may need to build a plugin for one instance: the model, the GPU, the
 * deployment, coefficients and free-form options (for example from {@code --option key=value}).
 */
public interface ProviderContext {

  ModelSpec model();

  HardwareSpec hardware();

  DeploymentSpec deployment();

  /** Coefficients given by the user, or {@link Coefficients#empty()} to use bundled defaults. */
  Coefficients coefficients();

  /** Free-form string options, never null. */
  Map<String, String> options();

  /** The option {@code key}, if present. */
  default Optional<String> option(String key) {
    return Optional.ofNullable(options().get(key));
  }

  /** A seed for plugins that need randomness; the same run always passes the same seed. */
  default long seed() {
    return 42L;
  }
}
