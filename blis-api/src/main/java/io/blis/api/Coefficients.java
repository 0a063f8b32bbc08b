package io.blis.api;

import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Named vectors of latency-model coefficients (for example {@code alpha} and {@code beta}), as
 * loaded from a coefficient file or given on the command line. Immutable; every value is finite.
 * The meaning and unit of each entry is documented by the latency model that reads it.
 */
public final class Coefficients {

  private static final Coefficients EMPTY = new Coefficients("none", Map.of());

  private final String source;
  private final Map<String, double[]> vectors;

  private Coefficients(String source, Map<String, double[]> vectors) {
    this.source = source;
    this.vectors = vectors;
  }

  /**
   * No coefficients at all (models then use their bundled defaults).
   *
   * @return the shared empty instance, whose {@link #source()} is {@code none}
   */
  public static Coefficients empty() {
    return EMPTY;
  }

  /**
   * Coefficients with the given vectors.
   *
   * @param source where they came from (a path or a description), used in error messages
   * @param vectors the vectors by name; copied, so later changes to the map or its arrays do not
   *     show
   * @return coefficients keeping the map's iteration order
   * @throws IllegalArgumentException if a value is NaN or infinite
   * @throws NullPointerException if {@code source}, {@code vectors} or one of its arrays is null
   */
  public static Coefficients of(String source, Map<String, double[]> vectors) {
    Objects.requireNonNull(source, "source");
    Map<String, double[]> copy = new LinkedHashMap<>();
    for (Map.Entry<String, double[]> e : vectors.entrySet()) {
      double[] v = e.getValue().clone();
      for (int i = 0; i < v.length; i++) {
        if (!Double.isFinite(v[i])) {
          throw new IllegalArgumentException(
              source + ": coefficient " + e.getKey() + "[" + i + "] must be a finite number, got "
                  + v[i]);
        }
      }
      copy.put(e.getKey(), v);
    }
    return new Coefficients(source, Collections.unmodifiableMap(copy));
  }

  /** {@return where these coefficients came from (a path or a description)} */
  public String source() {
    return source;
  }

  /** {@return the names of the vectors, in insertion order (unmodifiable)} */
  public Set<String> names() {
    return vectors.keySet();
  }

  /**
   * Whether a vector with this name exists.
   *
   * @param name the vector's name, for example {@code alpha}
   * @return true when {@link #vector(String)} would return it
   */
  public boolean has(String name) {
    return vectors.containsKey(name);
  }

  /**
   * A copy of the named vector.
   *
   * @param name the vector's name, for example {@code alpha}
   * @return a new array the caller may modify
   * @throws IllegalArgumentException if there is no such vector
   */
  public double[] vector(String name) {
    double[] v = vectors.get(name);
    if (v == null) {
      throw new IllegalArgumentException(
          source + ": no coefficient vector '" + name + "' (have " + vectors.keySet() + ")");
    }
    return v.clone();
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof Coefficients other) || !other.vectors.keySet().equals(vectors.keySet())) {
      return false;
    }
    for (Map.Entry<String, double[]> e : vectors.entrySet()) {
      if (!Arrays.equals(e.getValue(), other.vectors.get(e.getKey()))) {
        return false;
      }
    }
    return true;
  }

  @Override
  public int hashCode() {
    int h = 0;
    for (Map.Entry<String, double[]> e : vectors.entrySet()) {
      h += e.getKey().hashCode() ^ Arrays.hashCode(e.getValue());
    }
    return h;
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("Coefficients[").append(source);
    vectors.forEach((k, v) -> sb.append(", ").append(k).append('=').append(Arrays.toString(v)));
    return sb.append(']').toString();
  }
}
