package io.blis.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.workload.synthetic.ArrivalProcess;
import io.blis.workload.synthetic.ClientSpec;
import io.blis.workload.synthetic.LengthSpec;
import io.blis.workload.synthetic.SessionSpec;
import io.blis.workload.synthetic.SyntheticWorkload;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

class ReadAheadSourceTest {

  private static final LengthSpec IN = new LengthSpec(300, 100, 1, 2000);
  private static final LengthSpec OUT = new LengthSpec(50, 20, 1, 400);

  private static List<RequestSpec> drain(RequestSource s) {
    List<RequestSpec> out = new ArrayList<>();
    RequestSpec r;
    while ((r = s.next()) != null) {
      out.add(r);
    }
    assertThat(s.exhausted()).isTrue();
    assertThat(s.next()).as("stays ended").isNull();
    return out;
  }

  @Test
  void aSyntheticWorkloadReadAheadIsTheSameRequestsInTheSameOrder() {
    List<RequestSpec> direct;
    try (RequestSource s = SyntheticWorkload.poissonGaussian(50, 5_000, IN, OUT, 16, 4)) {
      direct = drain(s);
    }
    try (RequestSource s = SyntheticWorkload.poissonGaussian(50, 5_000, IN, OUT, 16, 4);
        ReadAheadSource ahead = ReadAheadSource.over(s)) {
      assertThat(ahead.readsAhead()).isTrue();
      List<RequestSpec> read = drain(ahead);
      assertThat(read).hasSize(5_000).isEqualTo(direct); // records: ids, times and prompt ids alike
    }
  }

  /** A source that counts its calls and fails at its k-th request. */
  private static final class Failing implements RequestSource {
    final int failAt;
    final boolean ahead;
    final Set<String> threads = ConcurrentHashMap.newKeySet();
    volatile boolean closed;
    int calls;

    Failing(int failAt, boolean ahead) {
      this.failAt = failAt;
      this.ahead = ahead;
    }

    @Override
    public RequestSpec next() {
      threads.add(Thread.currentThread().getName());
      if (++calls == failAt) {
        throw new IllegalArgumentException("line " + calls + ": a bad row");
      }
      return new RequestSpec(calls, calls * 1_000L, new int[] {5, 6, 7}, 4, "standard", "", "", 0, -1, 0, 0, 0);
    }

    @Override
    public boolean readableAhead() {
      return ahead;
    }

    @Override
    public void close() {
      closed = true;
    }
  }

  @Test
  void anErrorIsRaisedAtTheRequestThatCausedItAfterTheOnesBefore() {
    Failing f = new Failing(1_000, true); // past three whole chunks
    try (ReadAheadSource ahead = ReadAheadSource.over(f)) {
      for (int i = 1; i < 1_000; i++) {
        assertThat(ahead.next().id()).isEqualTo(i);
      }
      assertThatThrownBy(ahead::next).isInstanceOf(IllegalArgumentException.class)
          .hasMessage("line 1000: a bad row");
      assertThatThrownBy(ahead::next).as("and again if asked again")
          .hasMessage("line 1000: a bad row");
    }
    assertThat(f.threads).containsExactly("blis-read-ahead");
  }

  @Test
  void closingEarlyStopsTheReaderAndLeavesTheSourceOpen() throws Exception {
    Failing endless = new Failing(-1, true);
    ReadAheadSource ahead = ReadAheadSource.over(endless);
    assertThat(ahead.next().id()).isEqualTo(1);
    ahead.close();
    assertThat(endless.closed).isFalse();
    int stoppedAt = endless.calls;
    Thread.sleep(50);
    assertThat(endless.calls).as("nothing is read once closed").isEqualTo(stoppedAt)
        .isLessThanOrEqualTo(1 + ReadAheadSource.CHUNK * (ReadAheadSource.CHUNKS + 2));
    assertThat(Thread.getAllStackTraces().keySet()).noneMatch(t -> t.getName().equals("blis-read-ahead"));
  }

  @Test
  void aSourceThatCannotBeReadAheadIsCalledOnTheCallersThread() {
    Failing f = new Failing(10, false);
    try (ReadAheadSource ahead = ReadAheadSource.over(f)) {
      assertThat(ahead.readsAhead()).isFalse();
      for (int i = 1; i < 10; i++) {
        assertThat(ahead.next().id()).isEqualTo(i);
        assertThat(f.calls).as("one call per request, none ahead").isEqualTo(i);
      }
    }
    assertThat(f.threads).containsExactly(Thread.currentThread().getName());
  }

  @Test
  void multiTurnSessionsAreNotReadAhead() {
    ClientSpec chat = new ClientSpec("chat", "", "standard", new ArrivalProcess.Poisson(2),
        LengthSpec.fixed(100), LengthSpec.fixed(10), "", 0, 0, new SessionSpec(3, 1_000, true), List.of());
    ClientSpec single = new ClientSpec("api", "", "standard", new ArrivalProcess.Poisson(2),
        LengthSpec.fixed(100), LengthSpec.fixed(10), "", 0, 0, SessionSpec.NONE, List.of());
    try (RequestSource s = SyntheticWorkload.of(List.of(chat, single), 1, 100, Long.MAX_VALUE)) {
      assertThat(s.readableAhead()).isFalse();
    }
    try (RequestSource s = SyntheticWorkload.of(List.of(single), 1, 100, Long.MAX_VALUE)) {
      assertThat(s.readableAhead()).isTrue();
    }
  }
}
