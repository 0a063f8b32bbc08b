package io.blis.cli.serve;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.engine.EngineLimits;
import io.blis.engine.LinearTestModel;
import io.blis.engine.Simulation;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The real-time driver when the machine cannot keep up: simulated time is held back, so tokens
 * keep their order and spacing instead of arriving in a bunch.
 */
class RealTimeDriverTest {

  /** Every step 20 ms (so a token every 20 ms of one request alone). */
  private static final long STEP_US = 20_000;
  private static final int TOKENS = 30;
  /** A stall of the simulation thread, as when the CPU is taken away for that long. */
  private static final long STALL_MS = 200;
  private static final int STALL_AT = 5;

  /** Records when each token reached the sink; stalls the simulation thread once. */
  private static final class Recorder implements ResponseSink {
    final List<Long> arrivedNanos = new ArrayList<>();
    final List<Long> dueNanos = new ArrayList<>();
    final CountDownLatch finished = new CountDownLatch(1);

    @Override
    public void onToken(int index, int total, long due) {
      arrivedNanos.add(System.nanoTime());
      dueNanos.add(due);
      if (index == STALL_AT) {
        try {
          Thread.sleep(STALL_MS); // on the simulation thread: nothing else is delivered meanwhile
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }

    @Override
    public void onFinished(int promptTokens, int completionTokens) {
      finished.countDown();
    }

    @Override
    public void onFailed(int status, String message) {
      finished.countDown();
    }
  }

  private static RealTimeDriver driver() {
    return new RealTimeDriver(Simulation.builder()
        .latencyModel(new LinearTestModel(STEP_US, 0, 0, 0, 0, 0))
        .limits(new EngineLimits(16, 2048, 0, 4096))
        .totalKvBlocks(1000));
  }

  private static Recorder runWithAStall() throws Exception {
    Recorder r = new Recorder();
    try (RealTimeDriver d = driver()) {
      d.submit(new ServeRequest(false, "m", new int[] {1, 2, 3, 4}, TOKENS, true, false), r);
      assertThat(r.finished.await(30, TimeUnit.SECONDS)).as("the request finished").isTrue();
      // the tokens due during the stall were held back by about the stall (less the budget)
      assertThat(d.heldBackUs()).isGreaterThan((STALL_MS - 50) * 1000);
    }
    return r;
  }

  @Test
  void afterAStallTokensKeepTheirSpacingInsteadOfArrivingInABunch() throws Exception {
    Recorder r = runWithAStall();
    assertThat(r.arrivedNanos).hasSize(TOKENS);
    // after the stall, each token still comes about one step after the one before: none in a
    // bunch (a gap of a few ms would be one); a loaded machine can only make gaps longer
    int bunched = 0;
    for (int i = STALL_AT; i < TOKENS; i++) {
      long gapUs = (r.arrivedNanos.get(i) - r.arrivedNanos.get(i - 1)) / 1000;
      if (gapUs < STEP_US / 2) {
        bunched++;
      }
    }
    assertThat(bunched).as("tokens after the stall delivered less than half a step after the previous").isZero();
    // the due times the sink was given follow the stretched clock: the gap over the stall
    // includes it (so the server's latency metrics count it, as its clients do)
    long stallGapUs = (r.dueNanos.get(STALL_AT) - r.dueNanos.get(STALL_AT - 1)) / 1000;
    assertThat(stallGapUs).isGreaterThanOrEqualTo(STEP_US + (STALL_MS - 50) * 1000);
  }
}
