package io.blis.workload.trace;

import io.blis.workload.RequestSource;
import java.util.List;
import java.util.Objects;

/**
 * A request source read from another tool's trace, with one line per field of that trace that has
 * no meaning here ("FILE:LINE: ..."), for the caller to show.
 *
 * @param source the requests (single use)
 * @param notes what was read but has no effect, in file order
 */
public record NotedSource(RequestSource source, List<String> notes) {

  public NotedSource {
    Objects.requireNonNull(source, "source");
    notes = List.copyOf(notes);
  }
}
