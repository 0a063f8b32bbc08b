package io.blis.workload.synthetic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.spec.SpecWriter;
import io.blis.workload.spec.WorkloadSpec;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

/** A client's rate hour by hour: the time change, the arrivals per hour, the spec key. */
class RateCurveTest {

  private static List<Double> curve(double... hours) {
    List<Double> out = new ArrayList<>();
    for (double h : hours) {
      out.add(h);
    }
    return out;
  }

  /** 0 for hours 0-5, 2 for 6-11, 1 for 12-23. */
  private static final List<Double> SHAPE = curve(0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1);

  @Test
  void operationalAndRealTimeAreInversesAndEmptyHoursAreSkipped() {
    RateCurve c = RateCurve.hourly(SHAPE);
    // a day of operational time: 6 x 2 + 12 x 1 = 24 hours
    assertThat(c.opS(86_400)).isEqualTo(24 * 3600.0);
    // operational time starts at hour 6, passes twice as fast until noon
    assertThat(c.realS(0)).isEqualTo(6 * 3600.0);
    assertThat(c.realS(7200)).isEqualTo(7 * 3600.0);
    assertThat(c.realS(12 * 3600 + 1800)).isEqualTo(12 * 3600.0 + 1800);
    for (double t : new double[] {6 * 3600.0 + 1, 9 * 3600.0 + 17.5, 20 * 3600.0, 86_400 + 13 * 3600.0}) {
      assertThat(c.realS(c.opS(t))).isCloseTo(t, Offset.offset(1e-6));
    }
    // the next day's first hours are empty again
    assertThat(c.realS(24 * 3600.0 + 1)).isCloseTo(86_400 + 6 * 3600.0 + 0.5, Offset.offset(1e-6));
  }

  @Test
  void poissonArrivalsFollowTheCurveHourByHour() {
    WorkloadSpec spec = WorkloadSpec.parse("""
        seed: 3
        horizon_s: 86400
        clients:
          - id: c
            rate: 1
            rate_by_hour: %s
            input: {type: constant, value: 10}
            output: {type: constant, value: 5}
        """.formatted(SHAPE), "test");
    long[] perHour = new long[24];
    RequestSource s = spec.source();
    RequestSpec r;
    while ((r = s.next()) != null) {
      perHour[(int) (r.arrivalTimeUs() / 3_600_000_000L)]++;
    }
    for (int h = 0; h < 24; h++) {
      double expected = SHAPE.get(h) * 3600;
      // Poisson: within 5 standard deviations (sqrt 7200 = 85)
      assertThat((double) perHour[h]).as("hour " + h).isCloseTo(expected, Offset.offset(5 * Math.sqrt(expected) + 1e-9));
    }
  }

  @Test
  void aTopLevelCurveAppliesToClientsWithoutTheirOwnAndTheSpecWritesItBack() {
    WorkloadSpec spec = WorkloadSpec.parse("""
        seed: 3
        horizon_s: 3600
        rate_by_hour: %s
        clients:
          - id: shaped
            rate: 1
            input: {type: constant, value: 10}
            output: {type: constant, value: 5}
          - id: own
            rate: 1
            rate_by_hour: %s
            input: {type: constant, value: 10}
            output: {type: constant, value: 5}
        """.formatted(SHAPE, Collections.nCopies(24, 1.0)), "test");
    assertThat(spec.clients().get(0).curve()).isEqualTo(RateCurve.hourly(SHAPE));
    assertThat(spec.clients().get(1).curve()).isEqualTo(RateCurve.hourly(Collections.nCopies(24, 1.0)));
    String yaml = SpecWriter.toYaml(spec, List.of());
    assertThat(yaml).contains("rate_by_hour: [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0");
    assertThat(WorkloadSpec.parse(yaml, "written").clients()).isEqualTo(spec.clients());
  }

  @Test
  void badCurvesAreRefusedWithWhatWasExpected() {
    assertThatThrownBy(() -> RateCurve.hourly(curve(1, 2))).hasMessage("rate_by_hour needs 24 multipliers (hours 0 to 23), got 2");
    List<Double> negative = new ArrayList<>(SHAPE);
    negative.set(3, -1.0);
    assertThatThrownBy(() -> RateCurve.hourly(negative)).hasMessage("rate_by_hour[3] must be a finite number >= 0, got -1.0");
    assertThatThrownBy(() -> RateCurve.hourly(Collections.nCopies(24, 0.0)))
        .hasMessage("rate_by_hour: every hour is 0, so the client would send nothing");
  }
}
