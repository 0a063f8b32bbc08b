/**
 * Day plans ({@code blis day}): a workload simulated once per scaler configuration, each a {@code
 * blis run} with an autoscaler; the points compared on the node pool's cost and the SLO
 * attainment, with the frontier of the two, the best point for an attainment target, and the
 * replicas over the day, as CSV, a summary JSON and an HTML report.
 *
 * <p>Entry points: {@link io.blis.cli.plan.DayPlan} (the plan file), {@link
 * io.blis.cli.plan.DayPlanTable} (the answer and its files), {@link
 * io.blis.cli.plan.DayPlanReport} (the report). The format and every output column are documented
 * in docs/capacity.md, section Planning a day.
 */
package io.blis.cli.plan;
