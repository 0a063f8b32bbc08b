package io.blis.engine.validate;

import io.blis.api.Coefficients;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * The coefficients a calibration may change: names, physically plausible bounds, a starting
 * point, and how a vector of values becomes {@link Coefficients}. Bounds are the only guard
 * against implausible values (they are never relaxed to lower the loss).
 */
public final class ParameterSpace {

  private final List<String> names;
  private final double[] lower;
  private final double[] upper;
  private final double[] initial;
  private final Function<double[], Coefficients> builder;

  /**
   * @param names one name per parameter
   * @param lower inclusive lower bounds
   * @param upper inclusive upper bounds (strictly above the lower bounds)
   * @param initial starting point, inside the bounds
   * @param builder turns a vector of parameter values into coefficients
   * @throws IllegalArgumentException when lengths differ, bounds are empty or the start is outside
   */
  public ParameterSpace(List<String> names, double[] lower, double[] upper, double[] initial,
      Function<double[], Coefficients> builder) {
    int n = names.size();
    if (n == 0 || lower.length != n || upper.length != n || initial.length != n) {
      throw new IllegalArgumentException("parameter space: names, bounds and initial values must have the same"
          + " non-zero length, got " + n + ", " + lower.length + ", " + upper.length + ", " + initial.length);
    }
    for (int i = 0; i < n; i++) {
      if (!(lower[i] < upper[i]) || !Double.isFinite(lower[i]) || !Double.isFinite(upper[i])) {
        throw new IllegalArgumentException("parameter " + names.get(i) + ": bounds [" + lower[i] + ", "
            + upper[i] + "] must be finite with lower < upper");
      }
      if (!(initial[i] >= lower[i] && initial[i] <= upper[i])) {
        throw new IllegalArgumentException("parameter " + names.get(i) + ": initial value " + initial[i]
            + " outside its bounds [" + lower[i] + ", " + upper[i] + "]");
      }
    }
    this.names = List.copyOf(names);
    this.lower = lower.clone();
    this.upper = upper.clone();
    this.initial = initial.clone();
    this.builder = builder;
  }

  public int size() {
    return names.size();
  }

  public List<String> names() {
    return names;
  }

  public double[] lower() {
    return lower.clone();
  }

  public double[] upper() {
    return upper.clone();
  }

  public double[] initial() {
    return initial.clone();
  }

  /** Index of a named parameter. */
  public int indexOf(String name) {
    int i = names.indexOf(name);
    if (i < 0) {
      throw new IllegalArgumentException("no calibration parameter '" + name + "' (have " + names + ")");
    }
    return i;
  }

  /** The coefficients for parameter values {@code x} (clamped into the bounds first). */
  public Coefficients coefficients(double[] x) {
    return builder.apply(clamp(x));
  }

  /** {@code x} with every value clamped into its bounds. */
  public double[] clamp(double[] x) {
    double[] c = x.clone();
    for (int i = 0; i < c.length; i++) {
      c[i] = Math.max(lower[i], Math.min(upper[i], c[i]));
    }
    return c;
  }

  /** Maps values to [0, 1] per parameter. */
  double[] normalize(double[] x) {
    double[] u = new double[x.length];
    for (int i = 0; i < x.length; i++) {
      u[i] = (x[i] - lower[i]) / (upper[i] - lower[i]);
    }
    return u;
  }

  /** Maps [0, 1] per parameter back to values. */
  double[] denormalize(double[] u) {
    double[] x = new double[u.length];
    for (int i = 0; i < u.length; i++) {
      x[i] = lower[i] + Math.max(0, Math.min(1, u[i])) * (upper[i] - lower[i]);
    }
    return x;
  }

  @Override
  public String toString() {
    return "ParameterSpace" + names + " lower=" + Arrays.toString(lower) + " upper=" + Arrays.toString(upper);
  }
}
