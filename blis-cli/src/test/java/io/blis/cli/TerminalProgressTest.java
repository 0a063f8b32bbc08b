package io.blis.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The progress line of long commands: when it shows, what it says, how it is cleared. */
class TerminalProgressTest {

  private final long[] now = {0};
  private final StringWriter text = new StringWriter();

  private TerminalProgress progress(boolean enabled) {
    return new TerminalProgress("blis x", new PrintWriter(text), enabled, () -> now[0]);
  }

  @Test
  void showsFromTheSecondSecondAtMostOnceASecondAndIsClearedAtTheEnd() {
    TerminalProgress p = progress(true);
    now[0] = 999_999_999L;
    p.update(() -> "early");
    assertThat(text.toString()).isEmpty();
    now[0] = 1_000_000_000L;
    p.update(() -> "12,000 rows");
    now[0] = 1_500_000_000L;
    p.update(() -> "too soon");
    now[0] = 2_100_000_000L;
    p.update(() -> "9 rows");
    p.close();
    assertThat(text.toString()).isEqualTo("\rblis x: 12,000 rows (1 s)" + "\rblis x: 9 rows (2 s)     "
        + "\r" + " ".repeat("blis x: 9 rows (2 s)".length()) + "\r");
  }

  @Test
  void notAtATerminalNothingIsShownAndTheSourceIsTheSame() {
    TerminalProgress p = progress(false);
    now[0] = 5_000_000_000L;
    p.update(() -> "x");
    p.close();
    assertThat(text.toString()).isEmpty();
    RequestSource s = RequestSource.of(List.of());
    assertThat(p.counting(s, "")).isSameAs(s);
  }

  @Test
  void aCountedSourceHandsOutTheSameRequestsAndSaysHowManyArrived() {
    List<RequestSpec> requests = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      requests.add(RequestSpec.simple(i, i * 1_500_000L, new int[] {5, 6, 7}, 2));
    }
    TerminalProgress p = progress(true);
    RequestSource counted = p.counting(RequestSource.of(requests), "point 1: ");
    List<RequestSpec> out = new ArrayList<>();
    RequestSpec r;
    while ((r = counted.next()) != null) {
      out.add(r);
      now[0] += 600_000_000L;
    }
    assertThat(out).isEqualTo(requests);
    // pulls at 0, 0.6, 1.2, 1.8 and 2.4 s: a line at the 3rd (due from 1 s) and the 5th (due from 2.2 s)
    assertThat(text.toString()).contains("\rblis x: point 1: 3 requests arrived, simulated time 3.0 s (1 s)")
        .contains("point 1: 5 requests arrived, simulated time 6.0 s (2 s)");
  }
}
