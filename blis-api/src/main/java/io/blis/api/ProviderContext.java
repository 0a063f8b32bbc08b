package io.blis.api;

import java.util.Map;
import java.util.Optional;

/**
 * Everything a provider may need to build a plugin for one instance: the model, the GPU, the
 * deployment, coefficients and free-form options (for example from {@code --option key=value}).
 */
public interface ProviderContext {

  /** {@return the architecture of the served model} */
  ModelSpec model();

  /** {@return the datasheet figures of the instance's GPU type} */
  HardwareSpec hardware();

  /** {@return the parallelism, vLLM limits and KV cache size of the instance} */
  DeploymentSpec deployment();

  /**
   * {@return the coefficients given by the user, or {@link Coefficients#empty()} to use bundled
   * defaults} Never null.
   */
  Coefficients coefficients();

  /** {@return the free-form string options by name, never null} */
  Map<String, String> options();

  /**
   * The option {@code key}, if present.
   *
   * @param key the option's name
   * @return its value, or empty when {@link #options()} has no such key
   */
  default Optional<String> option(String key) {
    return Optional.ofNullable(options().get(key));
  }

  /**
   * {@return a seed for plugins that need randomness} The same run always passes the same seed; 42
   * by default.
   */
  default long seed() {
    return 42L;
  }
}
