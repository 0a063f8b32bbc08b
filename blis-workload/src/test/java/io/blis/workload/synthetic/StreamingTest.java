package io.blis.workload.synthetic;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.inferenceperf.InferencePerfProfile;
import io.blis.workload.inferenceperf.InferencePerfWorkload;
import io.blis.workload.inferenceperf.LoadStage;
import io.blis.workload.inferenceperf.SharedPrefixData;
import io.blis.workload.trace.TraceHeader;
import io.blis.workload.trace.TraceReader;
import io.blis.workload.trace.TraceWriter;
import java.lang.ref.WeakReference;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Sources generate requests as they are pulled and keep none of them. */
class StreamingTest {

  private static long usedHeap() {
    Runtime rt = Runtime.getRuntime();
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return rt.totalMemory() - rt.freeMemory();
  }

  /** Pulls everything, checking that pulled requests become unreachable; returns the count. */
  private static long pullAll(RequestSource src, long[] heapAtHalf, long expected) {
    long n = 0;
    WeakReference<RequestSpec> early = null;
    RequestSpec r;
    while ((r = src.next()) != null) {
      n++;
      if (n == 1000) {
        early = new WeakReference<>(r);
      }
      if (n == expected / 2) {
        heapAtHalf[0] = usedHeap();
      }
    }
    usedHeap();
    assertThat(early).isNotNull();
    assertThat(early.get()).as("a pulled request is not retained by its source").isNull();
    return n;
  }

  @Test
  void twoMillionSyntheticRequestsInBoundedMemory() {
    LengthSpec tiny = new LengthSpec(4, 1, 1, 8);
    long before = usedHeap();
    long[] half = new long[1];
    long n = pullAll(SyntheticWorkload.poissonGaussian(1000, 2_000_000, tiny, tiny, 2, 9), half,
        2_000_000);
    assertThat(n).isEqualTo(2_000_000);
    // 2 million requests would need well over 100 MB if they were kept.
    assertThat(half[0] - before).isLessThan(16L << 20);
  }

  @Test
  void inferencePerfStagesAndTracesStream(@TempDir Path dir) {
    InferencePerfProfile p = new InferencePerfProfile(
        new SharedPrefixData(2, 2, 3, 3, 1), List.of(new LoadStage(5000, 100)), 1, 0);
    long[] half = new long[1];
    long before = usedHeap();
    assertThat(pullAll(InferencePerfWorkload.synthetic(p, 1), half, 500_000)).isEqualTo(500_000);
    assertThat(half[0] - before).isLessThan(16L << 20);

    Path trace = dir.resolve("big.csv.gz");
    LengthSpec tiny = new LengthSpec(3, 1, 1, 6);
    try (TraceWriter w = TraceWriter.create(trace, TraceHeader.of(3, false, "stream"));
        RequestSource src = SyntheticWorkload.poissonGaussian(1000, 300_000, tiny, tiny, 0, 3)) {
      RequestSpec r;
      while ((r = src.next()) != null) {
        w.write(r);
      }
    }
    before = usedHeap();
    try (RequestSource src = TraceReader.open(trace)) {
      assertThat(pullAll(src, half, 300_000)).isEqualTo(300_000);
    }
    assertThat(half[0] - before).isLessThan(16L << 20);
  }
}
