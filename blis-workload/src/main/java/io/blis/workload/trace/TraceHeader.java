package io.blis.workload.trace;

import java.util.Objects;

/**
 * The header of a BLIS trace file (first line, {@code # blis-trace } followed by JSON).
 *
 * @param version format version, currently 1
 * @param tokenSeed seed from which prompts are rebuilt when the file has no token ids
 * @param tokenIds whether the rows carry the prompt token ids (column {@code token_ids})
 * @param description free text: what produced the trace (never interpreted)
 */
public record TraceHeader(int version, long tokenSeed, boolean tokenIds, String description) {

  /** Current format version. */
  public static final int VERSION = 1;

  public TraceHeader {
    Objects.requireNonNull(description, "description");
    if (version != VERSION) {
      throw new IllegalArgumentException(
          "unsupported blis-trace version " + version + ", expected " + VERSION);
    }
  }

  /** A version-1 header. */
  public static TraceHeader of(long tokenSeed, boolean tokenIds, String description) {
    return new TraceHeader(VERSION, tokenSeed, tokenIds, description);
  }
}
