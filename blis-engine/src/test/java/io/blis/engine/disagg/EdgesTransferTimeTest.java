package io.blis.engine.disagg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * A KV transfer's time is computed so that it cannot overflow the clock: one that would take more
 * than an hour at its rate is refused with what it moves and at what rate, and one within the hour
 * ends when its bytes are through.
 */
class EdgesTransferTimeTest {

  @Test
  void aTransferTooSlowToEndIsRefusedNotAnOverflowedClock() {
    Links<String> links = new Links<>(1);
    // 1 TB at 1e-300 GB/s: without the check, (long) of the time is Long.MAX_VALUE and now + it wraps negative
    links.start(new Links.Flow<>("r", 1_000_000_000_000L, 1e-291, new int[0], 0, 5), 5);
    assertThatThrownBy(links::nextCompletionUs).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("prefill/decode KV transfer: 1000000000000 bytes at 1.000e-300 GB/s would take")
        .hasMessageContaining("beyond the limit of 3600 s (one hour) for one transfer");
  }

  @Test
  void aTransferJustOverAnHourIsRefusedAndOneWithinItEndsOnTime() {
    Links<String> over = new Links<>(1);
    over.start(new Links.Flow<>("r", 3_600_000_001L, 1e6, new int[0], 0, 0), 0);
    assertThatThrownBy(over::nextCompletionUs).hasMessageContaining("would take 3600 s");
    Links<String> within = new Links<>(1);
    within.start(new Links.Flow<>("r", 3_600_000_000L, 1e6, new int[0], 0, 7), 7);
    assertThat(within.nextCompletionUs()).isEqualTo(7 + 3_600_000_000L);
  }
}
