package io.blis.workload.inferenceperf;

import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.trace.GroundTruthTrace;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * Replays a ground-truth trace: real send times and prompt lengths, prompt structure from the
 * profile. Request n of a stage uses prompt identity {@code n mod N}; a row whose recorded length
 * differs from that identity's usual (most frequent) length but equals the usual length of an
 * identity at most {@value #SEARCH} positions away is attributed to that identity (the client's
 * workers occasionally send neighbouring requests out of order). Failed rows (no recorded length)
 * use the usual length of their identity. Rows are read lazily on a second pass over the file.
 */
final class ReplaySource implements RequestSource {

  static final int SEARCH = 3;

  private final InferencePerfProfile profile;
  private final PromptSet prompts;
  private final int[] usualLength;
  private final GroundTruthTrace.RowReader reader;
  private final long timeoutUs;
  private int stage = -1;
  private int indexInStage;

  ReplaySource(InferencePerfProfile profile, PromptSet prompts, Path trace) {
    this.profile = profile;
    this.prompts = prompts;
    this.usualLength = usualLengths(trace, prompts.size());
    this.timeoutUs = Math.round(profile.clientTimeoutS() * 1e6);
    this.reader = GroundTruthTrace.open(trace);
  }

  /** Most frequent recorded length per identity (ties to the shorter); -1 when never recorded. */
  private static int[] usualLengths(Path trace, int n) {
    List<TreeMap<Integer, Integer>> counts = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      counts.add(new TreeMap<>());
    }
    int[] state = {-1, 0};
    long[] rows = {0};
    GroundTruthTrace.forEach(trace, row -> {
      rows[0]++;
      if (row.stage() != state[0]) {
        state[0] = row.stage();
        state[1] = 0;
      }
      int identity = state[1]++ % n;
      if (row.inputTokens() > 0) {
        counts.get(identity).merge(row.inputTokens(), 1, Integer::sum);
      }
    });
    if (rows[0] == 0) {
      throw new IllegalArgumentException(
          trace + ": no requests: the ground-truth trace has its header line and no rows");
    }
    int[] usual = new int[n];
    for (int i = 0; i < n; i++) {
      int best = -1;
      int bestCount = 0;
      for (var e : counts.get(i).entrySet()) {
        if (e.getValue() > bestCount) {
          best = e.getKey();
          bestCount = e.getValue();
        }
      }
      usual[i] = best;
    }
    return usual;
  }

  @Override
  public RequestSpec next() {
    GroundTruthTrace.Row row = reader.next();
    if (row == null) {
      return null;
    }
    if (row.stage() != stage) {
      stage = row.stage();
      indexInStage = 0;
    }
    int n = prompts.size();
    int p = indexInStage++ % n;
    int length = row.inputTokens();
    if (length > 0 && length != usualLength[p]) {
      for (int d = 1; d <= SEARCH; d++) {
        int before = Math.floorMod(p - d, n);
        int after = (p + d) % n;
        if (usualLength[before] == length) {
          p = before;
          break;
        }
        if (usualLength[after] == length) {
          p = after;
          break;
        }
      }
    }
    if (length <= 0) {
      length = usualLength[p] > 0 ? usualLength[p] : prompts.inputTokens(p);
    }
    int[] tokens = length == prompts.inputTokens(p) ? prompts.tokens(p) : prompts.build(p, length);
    long arrivalUs = Math.round(row.arrivalMs() * 1000.0);
    return new RequestSpec(
        row.req(), arrivalUs, tokens, prompts.outputTokens(p), "standard", "",
        prompts.groupName(p), prompts.prefixTokens(p, length), -1, 0, timeoutUs,
        row.stage());
  }

  /** The rows are replayed at their recorded times whatever the simulation does. */
  @Override
  public boolean readableAhead() {
    return true;
  }

  @Override
  public void close() {
    reader.close();
  }
}
