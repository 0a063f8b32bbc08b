package io.blis.latency.coeff;

import io.blis.api.Coefficients;

/**
 * Validated access to the vectors of a {@link Coefficients} for a latency model: vectors missing
 * from the user's coefficients fall back to the model's bundled defaults, and every error names
 * the source, the vector and the model.
 */
public final class CoefficientVectors {

  private final String model;
  private final Coefficients given;
  private final Coefficients defaults;

  /**
   * @param model the latency model name, for messages
   * @param given the user's coefficients (possibly {@link Coefficients#empty()})
   * @param defaults the bundled defaults
   */
  public CoefficientVectors(String model, Coefficients given, Coefficients defaults) {
    this.model = model;
    this.given = given;
    this.defaults = defaults;
  }

  /** The coefficients a vector named {@code name} is taken from. */
  public Coefficients sourceOf(String name) {
    return given.has(name) ? given : defaults;
  }

  /**
   * The vector {@code name} (from the user's coefficients, else the defaults), checked to have a
   * length in {@code [minLength, maxLength]} and non-negative entries.
   */
  public double[] nonNegative(String name, int minLength, int maxLength) {
    Coefficients from = sourceOf(name);
    if (!from.has(name)) {
      throw new IllegalArgumentException(
          from.source() + ": latency model '" + model + "' needs coefficient vector '" + name
              + "'");
    }
    double[] v = from.vector(name);
    if (v.length < minLength || v.length > maxLength) {
      String want = minLength == maxLength ? "" + minLength : minLength + " to " + maxLength;
      throw new IllegalArgumentException(
          from.source() + ": latency model '" + model + "' needs " + want + " values in '" + name
              + "', got " + v.length);
    }
    for (int i = 0; i < v.length; i++) {
      if (!Double.isFinite(v[i]) || v[i] < 0) {
        throw new IllegalArgumentException(
            from.source() + ": coefficient " + name + "[" + i + "] of latency model '" + model
                + "' must be finite and >= 0, got " + v[i]);
      }
    }
    return v;
  }

  /**
   * A single non-negative value {@code name} (a vector of length 1), or {@code fallback} when
   * neither the user's coefficients nor the defaults have it.
   */
  public double scalar(String name, double fallback) {
    if (!given.has(name) && !defaults.has(name)) {
      return fallback;
    }
    return nonNegative(name, 1, 1)[0];
  }
}
