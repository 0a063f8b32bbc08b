package io.blis.workload.synthetic;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * How often each of many LoRA adapters is named by a client's requests: each request
 * independently names adapter {@code k} (of {@code count}, {@code k = 0..count-1}) with
 * probability proportional to {@code 1 / (k + 1)^zipf} (Zipf's law: adapter 0 is the most
 * popular; {@code zipf = 0} makes every adapter equally popular), except a {@code baseShare} of
 * the requests, which name no adapter (the base model).
 *
 * <p>The adapters are either numbered, named {@code prefix + k} ({@link #numbered}: "lora-0" to
 * "lora-99"), or listed by name, the first the most popular ({@link #named}). The cumulative
 * distribution is computed once, when the popularity is made; a draw is one uniform number and a
 * binary search.
 */
public final class AdapterPopularity {

  /** No adapter: every request names the base model (and no random number is drawn). */
  public static final AdapterPopularity NONE = new AdapterPopularity("", 0, List.of(), 0, 0);

  /** The most adapters a popularity spans. */
  public static final int MAX_ADAPTERS = 100_000;

  /** The prefix of numbered adapters when none is given: "adapter-0", "adapter-1", ... */
  public static final String DEFAULT_PREFIX = "adapter-";

  /** The popularity exponent when none is given. */
  public static final double DEFAULT_ZIPF = 1.0;

  private final String prefix;
  private final int count;
  /** The names of listed adapters; empty for numbered ones. */
  private final List<String> names;
  private final double zipf;
  private final double baseShare;
  /** {@code cdf[k]}: the probability that a request naming an adapter names one of 0..k. */
  private final double[] cdf;

  private AdapterPopularity(String prefix, int count, List<String> names, double zipf, double baseShare) {
    this.prefix = prefix;
    this.count = count;
    this.names = names;
    this.zipf = zipf;
    this.baseShare = baseShare;
    this.cdf = new double[count];
    double sum = 0;
    for (int k = 0; k < count; k++) {
      sum += weight(k);
      cdf[k] = sum;
    }
    for (int k = 0; k < count; k++) {
      cdf[k] /= sum;
    }
    if (count > 0) {
      cdf[count - 1] = 1.0;
    }
  }

  /**
   * {@code count} adapters named {@code prefix + k} for {@code k = 0..count-1}.
   *
   * @param prefix the start of every adapter's name (may be empty)
   * @param count how many adapters, 1 to {@link #MAX_ADAPTERS}
   * @param zipf the popularity exponent, a finite number >= 0 (0: every adapter equally popular)
   * @param baseShare the share of the requests that name no adapter, in [0, 1]
   * @throws IllegalArgumentException for a value out of its range, or a prefix with a comma, a
   *     quote or a line break (traces store names unquoted)
   */
  public static AdapterPopularity numbered(String prefix, int count, double zipf, double baseShare) {
    Objects.requireNonNull(prefix, "prefix");
    if (count < 1 || count > MAX_ADAPTERS) {
      throw new IllegalArgumentException(
          "count must be a whole number in [1, " + MAX_ADAPTERS + "], got " + count);
    }
    requireName("prefix", prefix);
    check(zipf, baseShare);
    return new AdapterPopularity(prefix, count, List.of(), zipf, baseShare);
  }

  /**
   * The adapters {@code names}, the first the most popular.
   *
   * @param names the adapters' names: at least one, at most {@link #MAX_ADAPTERS}, each non-empty,
   *     no two equal, without commas, quotes or line breaks (traces store names unquoted)
   * @param zipf the popularity exponent, a finite number >= 0 (0: every adapter equally popular)
   * @param baseShare the share of the requests that name no adapter, in [0, 1]
   * @throws IllegalArgumentException for a name or value the above refuses
   */
  public static AdapterPopularity named(List<String> names, double zipf, double baseShare) {
    if (names == null || names.isEmpty()) {
      throw new IllegalArgumentException("names must list at least one adapter");
    }
    if (names.size() > MAX_ADAPTERS) {
      throw new IllegalArgumentException(
          "names lists " + names.size() + " adapters, more than the " + MAX_ADAPTERS + " allowed");
    }
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < names.size(); i++) {
      String name = names.get(i);
      if (name == null || name.isEmpty()) {
        throw new IllegalArgumentException("names[" + i + "] is empty, expected an adapter's name");
      }
      requireName("names[" + i + "]", name);
      if (!seen.add(name)) {
        throw new IllegalArgumentException("names lists '" + name + "' twice");
      }
    }
    check(zipf, baseShare);
    List<String> copy = List.copyOf(names);
    return new AdapterPopularity("", copy.size(), copy, zipf, baseShare);
  }

  private static void requireName(String key, String name) {
    if (name.contains(",") || name.contains("\"") || name.contains("\n") || name.contains("\r")) {
      throw new IllegalArgumentException(key + " '" + name
          + "' must not contain commas, quotes or line breaks (traces store adapter names unquoted)");
    }
  }

  private static void check(double zipf, double baseShare) {
    if (!(zipf >= 0) || Double.isInfinite(zipf)) {
      throw new IllegalArgumentException(
          "zipf must be a finite number >= 0 (0: every adapter equally popular), got " + zipf);
    }
    if (!(baseShare >= 0 && baseShare <= 1)) {
      throw new IllegalArgumentException("base_share must be in [0, 1] (the share of the requests"
          + " that name no adapter), got " + baseShare);
    }
  }

  private double weight(int k) {
    return zipf == 0 ? 1.0 : 1.0 / StrictMath.pow(k + 1.0, zipf);
  }

  /** Whether this is {@link #NONE}. */
  public boolean isNone() {
    return count == 0;
  }

  /** Whether the adapters are numbered ({@link #numbered}), not listed by name. */
  public boolean isNumbered() {
    return count > 0 && names.isEmpty();
  }

  /** The prefix of numbered adapters; empty for listed ones (and for {@link #NONE}). */
  public String prefix() {
    return prefix;
  }

  /** How many adapters (0 for {@link #NONE}). */
  public int count() {
    return count;
  }

  /** The listed adapters' names; empty for numbered ones (and for {@link #NONE}). */
  public List<String> names() {
    return names;
  }

  /** The popularity exponent. */
  public double zipf() {
    return zipf;
  }

  /** The share of the requests that name no adapter. */
  public double baseShare() {
    return baseShare;
  }

  /** The name of adapter {@code k} (0 the most popular). */
  public String name(int k) {
    if (k < 0 || k >= count) {
      throw new IndexOutOfBoundsException("adapter " + k + " of " + count);
    }
    return names.isEmpty() ? prefix + k : names.get(k);
  }

  /** The share of the requests that name adapter {@code k}. */
  public double probability(int k) {
    if (k < 0 || k >= count) {
      throw new IndexOutOfBoundsException("adapter " + k + " of " + count);
    }
    return (1 - baseShare) * (cdf[k] - (k == 0 ? 0 : cdf[k - 1]));
  }

  /**
   * The adapter one request names, empty for the base model: one uniform draw from {@code rng}
   * (none for {@link #NONE}).
   */
  String sample(SplittableRandom rng) {
    if (count == 0) {
      return "";
    }
    double u = rng.nextDouble();
    if (u < baseShare) {
      return "";
    }
    double v = (u - baseShare) / (1 - baseShare);
    // the first adapter whose cumulative probability exceeds v
    int lo = 0;
    int hi = count - 1;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (cdf[mid] > v) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return name(lo);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof AdapterPopularity p
        && prefix.equals(p.prefix)
        && count == p.count
        && names.equals(p.names)
        && Double.compare(zipf, p.zipf) == 0
        && Double.compare(baseShare, p.baseShare) == 0;
  }

  @Override
  public int hashCode() {
    return Objects.hash(prefix, count, names, zipf, baseShare);
  }

  @Override
  public String toString() {
    if (count == 0) {
      return "AdapterPopularity[none]";
    }
    return "AdapterPopularity[" + (names.isEmpty() ? count + " x " + prefix + "k" : names)
        + ", zipf=" + zipf + ", baseShare=" + baseShare + "]";
  }
}
