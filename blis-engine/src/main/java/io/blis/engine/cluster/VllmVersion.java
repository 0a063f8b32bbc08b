package io.blis.engine.cluster;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A vLLM release, as Go BLIS's {@code --vllm-version} names it ({@code vllm/vllm-openai:v0.8.4},
 * {@code v0.15.1}, {@code 0.11.0.post1}), and what it changes in the simulated engine: async
 * scheduling is on by default from {@link #ASYNC_SCHEDULING_DEFAULT} (vLLM's "async scheduling by
 * default" change, pull request 27614, released in that cycle; the ground truth's v0.15.1 runs with
 * it) and off before, where it had to be asked for.
 *
 * @param text the version as given
 * @param major major number
 * @param minor minor number
 * @param patch patch number
 */
public record VllmVersion(String text, int major, int minor, int patch) implements Comparable<VllmVersion> {

  /** The first release with async scheduling on by default. */
  public static final VllmVersion ASYNC_SCHEDULING_DEFAULT = new VllmVersion("v0.14.0", 0, 14, 0);

  private static final Pattern VERSION = Pattern.compile(
      "(?:[A-Za-z0-9._/-]*:)?v?(\\d{1,3})\\.(\\d{1,3})(?:\\.(\\d{1,3}))?(?:[.+-]?(?:post|rc|dev)\\d*)?(?:\\+[A-Za-z0-9.]+)?");

  /**
   * Parses a version, a container image tag ({@code vllm/vllm-openai:v0.8.4}) or a bare version.
   *
   * @throws IllegalArgumentException naming what was expected
   */
  public static VllmVersion parse(String text) {
    Matcher m = VERSION.matcher(text == null ? "" : text.strip());
    if (!m.matches()) {
      throw new IllegalArgumentException("'" + io.blis.workload.TextFiles.quote(text)
          + "' is not a vLLM version; expected for example v0.15.1, 0.8.4 or vllm/vllm-openai:v0.8.4");
    }
    return new VllmVersion(text.strip(), Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)),
        m.group(3) == null ? 0 : Integer.parseInt(m.group(3)));
  }

  /** The release the bundled coefficients were fitted on (the ground truth's). */
  public static final VllmVersion FITTED = new VllmVersion("v0.15.1", 0, 15, 1);

  /** The first release whose default engine is V1. */
  public static final VllmVersion V1_DEFAULT = new VllmVersion("v0.8.0", 0, 8, 0);

  /** Whether this release runs the V1 engine unless told otherwise (0.8 and later). */
  public boolean v1ByDefault() {
    return compareTo(V1_DEFAULT) >= 0;
  }

  /**
   * The first release taken to reuse freed blocks without a hash before cached ones (vLLM pull
   * request 43447, merged in 2026-06: uncached blocks prepended to the free queue). 0.21 lacks it
   * (vllm-ascend backported it to 0.21 on 2026-06-12) and 0.23.0 has it (kvcached pull request 439
   * of 2026-08); 0.22 is not established and taken as without.
   */
  public static final VllmVersion FRESH_BLOCKS_FIRST = new VllmVersion("v0.23.0", 0, 23, 0);

  /** Whether this release reuses a freed block without a hash before any cached block. */
  public boolean freesFreshBlocksFirst() {
    return compareTo(FRESH_BLOCKS_FIRST) >= 0;
  }

  /** Whether this release schedules asynchronously unless told not to. */
  public boolean asyncSchedulingByDefault() {
    return compareTo(ASYNC_SCHEDULING_DEFAULT) >= 0;
  }

  /** {@code major.minor.patch}. */
  public String number() {
    return major + "." + minor + "." + patch;
  }

  @Override
  public int compareTo(VllmVersion o) {
    int c = Integer.compare(major, o.major);
    if (c == 0) {
      c = Integer.compare(minor, o.minor);
    }
    return c != 0 ? c : Integer.compare(patch, o.patch);
  }
}
