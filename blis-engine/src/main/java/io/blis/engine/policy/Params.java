package io.blis.engine.policy;

import io.blis.workload.TextFiles;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reads a policy's parameters from its provider context's options: unknown keys and values that
 * do not parse or are out of range are one clear error naming the policy, the key and the value.
 */
public final class Params {

  private final String policy;
  private final Map<String, String> values;

  private Params(String policy, Map<String, String> values, Set<String> accepted) {
    this.policy = policy;
    this.values = values;
    for (String key : values.keySet()) {
      if (!accepted.contains(key)) {
        throw new IllegalArgumentException(policy + ": unknown parameter '"
            + TextFiles.quote(key) + "'; accepted: "
            + (accepted.isEmpty() ? "none" : String.join(", ", new TreeSet<>(accepted))));
      }
    }
  }

  /** The parameters of {@code policy}, accepting only {@code accepted} keys. */
  public static Params of(String policy, Map<String, String> values, String... accepted) {
    return new Params(policy, values, Set.of(accepted));
  }

  /** The value of {@code key}, or {@code dflt}. */
  public String string(String key, String dflt) {
    return values.getOrDefault(key, dflt);
  }

  /** A number >= {@code min}. */
  public double number(String key, double dflt, double min) {
    String v = values.get(key);
    if (v == null) {
      return dflt;
    }
    double d = parse(key, v);
    if (!Double.isFinite(d) || d < min) {
      throw bad(key, v, "a finite number >= " + fmt(min));
    }
    return d;
  }

  /** A finite number > 0. */
  public double positive(String key, double dflt) {
    String v = values.get(key);
    if (v == null) {
      return dflt;
    }
    double d = parse(key, v);
    if (!(d > 0) || !Double.isFinite(d)) {
      throw new IllegalArgumentException(policy + ": parameter " + key + " must be "
          + (d > 0 ? "finite" : "positive") + ", got " + v.trim());
    }
    return d;
  }

  private double parse(String key, String v) {
    try {
      return Double.parseDouble(v.trim());
    } catch (NumberFormatException e) {
      throw bad(key, v, "a number");
    }
  }

  /** A whole number >= {@code min}. */
  public int integer(String key, int dflt, int min) {
    String v = values.get(key);
    if (v == null) {
      return dflt;
    }
    int i;
    try {
      i = Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      throw bad(key, v, "a whole number");
    }
    if (i < min) {
      throw bad(key, v, "a whole number >= " + min);
    }
    return i;
  }

  /** The error for {@code key}'s {@code value}, which should have been {@code expected}. */
  public IllegalArgumentException bad(String key, String value, String expected) {
    return new IllegalArgumentException(
        policy + ": parameter " + key + " must be " + expected + ", got '" + value + "'");
  }

  private static String fmt(double d) {
    return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
  }
}
