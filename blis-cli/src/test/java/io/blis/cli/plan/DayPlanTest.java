package io.blis.cli.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/** Reading a day plan: the grid's order, the labels, and how a point's flags replace the shared ones. */
class DayPlanTest {

  /** Switches of this test: --flow-control and --quiet-ish flags take no value. */
  private static final Predicate<String> TAKES_VALUE = f -> !Set.of("--flow-control").contains(f);

  private static DayPlan parse(String text) {
    return DayPlan.parse(text, "plan.yaml", TAKES_VALUE);
  }

  @Test
  void theGridIsEveryCombinationFirstKeySlowestThenTheListedPoints() {
    DayPlan p = parse("""
        run: --model m --autoscaler hpa
        grid:
          --autoscaler-option: [target=8, target=16]
          --min-replicas: [1, 2, 3]
        points:
          - {name: sat, flags: [--autoscaler, saturation]}
        """);
    assertThat(p.points()).extracting(DayPlan.Point::label).containsExactly(
        "autoscaler-option target=8, min-replicas 1", "autoscaler-option target=8, min-replicas 2",
        "autoscaler-option target=8, min-replicas 3", "autoscaler-option target=16, min-replicas 1",
        "autoscaler-option target=16, min-replicas 2", "autoscaler-option target=16, min-replicas 3", "sat");
    assertThat(p.attainmentTarget()).isNull();
  }

  @Test
  void aPointReplacesTheSharedFlagAndOnlyTheSharedScalerOptionOfItsKey() {
    DayPlan p = parse("""
        run: --model m --min-replicas 1 --autoscaler hpa --autoscaler-option metric=running --autoscaler-option=target=48 --flow-control
        grid:
          --autoscaler-option: [target=32, [target=16, tolerance=0.2]]
          --min-replicas: [2]
        points:
          - {name: schedule, flags: --autoscaler schedule --autoscaler-option replicas=0:4}
        """);
    assertThat(p.args(p.points().get(0), TAKES_VALUE)).containsExactly("--model", "m", "--autoscaler", "hpa",
        "--autoscaler-option", "metric=running", "--flow-control", "--autoscaler-option", "target=32",
        "--min-replicas", "2");
    assertThat(p.args(p.points().get(1), TAKES_VALUE)).containsExactly("--model", "m", "--autoscaler", "hpa",
        "--autoscaler-option", "metric=running", "--flow-control", "--autoscaler-option", "target=16",
        "--autoscaler-option", "tolerance=0.2", "--min-replicas", "2");
    assertThat(p.points().get(1).label()).isEqualTo("autoscaler-option target=16 tolerance=0.2, min-replicas 2");
    // another scaler: the shared scaler's options go with it
    assertThat(p.args(p.points().get(2), TAKES_VALUE)).containsExactly("--model", "m", "--min-replicas", "1",
        "--flow-control", "--autoscaler", "schedule", "--autoscaler-option", "replicas=0:4");
  }

  @Test
  void badShapesAreNamed() {
    assertThatThrownBy(() -> parse("grid: {--min-replicas: [1]}\n"))
        .hasMessageStartingWith("plan.yaml: run is missing");
    assertThatThrownBy(() -> parse("run: --model m extra\npoints: [{name: a, flags: --min-replicas 1}]\n"))
        .hasMessage("plan.yaml: run: expected a flag (--name) at 'extra'");
    assertThatThrownBy(() -> parse("run: --model\npoints: [{name: a, flags: --min-replicas 1}]\n"))
        .hasMessage("plan.yaml: run: --model needs a value");
    assertThatThrownBy(() -> parse("run: --model m\npoints: [{name: a, flags: --x 1}, {name: a, flags: --y 2}]\n"))
        .hasMessage("plan.yaml: points[1]: the name 'a' is given twice");
    assertThatThrownBy(() -> parse("run: --model m\npoints: [{name: a}]\n"))
        .hasMessage("plan.yaml: points[0]: flags are missing");
    assertThatThrownBy(() -> parse("run: --model m\ngrid: {--a: [1,2,3,4,5,6,7,8,9,10], --b: [1,2,3,4,5,6,7,8,9,10],"
        + " --c: [1,2,3,4,5,6,7,8,9,10,11]}\n")).hasMessage("plan.yaml: grid has more than 1000 points");
  }

  @Test
  void theFrontierAndTheBestAreDecidedOnCostToTheCentThenAttainment() {
    // cost, attainment: #0 10.00 90%; #1 10.004 95% (the same cent as #0, more attained); #2 12 95%
    // (dominated); #3 15 99%; #4 20 98% (dominated)
    List<double[]> ca = List.of(new double[] {10, 0.90}, new double[] {10.004, 0.95}, new double[] {12, 0.95},
        new double[] {15, 0.99}, new double[] {20, 0.98});
    List<DayOutcome> outcomes = new java.util.ArrayList<>();
    for (int i = 0; i < ca.size(); i++) {
      outcomes.add(outcome(i, ca.get(i)[0], ca.get(i)[1]));
    }
    assertThat(DayPlanTable.frontier(outcomes)).containsExactly(1, 3);
    assertThat(DayPlanTable.best(outcomes, 0.95).index()).isEqualTo(1);
    assertThat(DayPlanTable.best(outcomes, 0.985).index()).isEqualTo(3);
    assertThat(DayPlanTable.best(outcomes, 0.995)).isNull();
    assertThat(DayPlanTable.best(outcomes, null)).isNull();
  }

  /** An outcome of the given cost and attainment (1,000 requests finished in hour 0). */
  private static DayOutcome outcome(int index, double cost, double attainment) {
    long met = Math.round(1000 * attainment);
    var scale = new io.blis.engine.result.AutoscaleReport("hpa", List.of(), cost, cost, cost, cost, 1, 1, 0, 0, 0,
        List.of(new io.blis.engine.result.AutoscaleReport.Hour(0, 1000, 1000, met)));
    var d = io.blis.engine.result.Distribution.EMPTY;
    return new DayOutcome(index, "p" + index, List.of(), false, scale, 1000, 1000, 0, 0, d, d);
  }
}
