package io.blis.engine.frontend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ApiServerQueueTest {

  @Test
  void itemsWaitForTheWorkBeforeThemAndAnIdleServerStartsAtOnce() {
    ApiServerQueue q = new ApiServerQueue(new ApiServer(1000, 2, 300));
    assertThat(q.admit(0, 50)).as("1000 + 2 x 50").isEqualTo(1100);
    assertThat(q.stream(500)).as("ready at 500, the server busy until 1100").isEqualTo(1400);
    assertThat(q.stream(500)).isEqualTo(1700);
    assertThat(q.stream(10_000)).as("idle again: starts when ready").isEqualTo(10_300);
    assertThat(q.admit(10_000, 0)).isEqualTo(11_300);
  }

  @Test
  void fractionsOfAMicrosecondAreCarriedNotLost() {
    ApiServerQueue q = new ApiServerQueue(new ApiServer(0, 0, 0.4));
    long last = 0;
    for (int i = 0; i < 1000; i++) {
      last = q.stream(0);
    }
    assertThat(last).isEqualTo(400);
  }

  @Test
  void noServerChargesNothing() {
    ApiServerQueue q = new ApiServerQueue(ApiServer.NONE);
    assertThat(q.active()).isFalse();
    assertThat(q.admit(7, 100_000)).isEqualTo(7);
    assertThat(q.stream(7)).isEqualTo(7);
  }

  @Test
  void parsesTheThreeCostsOrNoneAndNamesWhatWasExpected() {
    assertThat(ApiServer.parse("2000:0.5:120")).isEqualTo(new ApiServer(2000, 0.5, 120));
    assertThat(ApiServer.parse(" none ")).isEqualTo(ApiServer.NONE);
    assertThat(ApiServer.parse("0:0:0").active()).isFalse();
    assertThat(new ApiServer(2000, 0, 120)).hasToString("2000:0:120");
    assertThatThrownBy(() -> ApiServer.parse("2000:120")).hasMessageContaining("REQUEST_US:INPUT_TOKEN_US:CHUNK_US");
    assertThatThrownBy(() -> ApiServer.parse("2000:x:120")).hasMessageContaining("'x' is not a number");
    assertThatThrownBy(() -> ApiServer.parse("-1:0:0")).hasMessageContaining("request time").hasMessageContaining("-1");
    assertThatThrownBy(() -> ApiServer.parse("0:0:NaN")).hasMessageContaining("chunk time");
  }
}
