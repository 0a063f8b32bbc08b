/**
 * Sweeps: a grid or list of deployments (model, GPU, TP, PP, DP, EP, replicas, batch limits,
 * router, scheduler, prefill/decode split, LoRA slots) and one question for all of them, the
 * capacity at latency targets or the metrics at fixed rates; run in parallel, resumable, written as
 * a table (CSV and JSON lines) with costs, the Pareto frontier of throughput per dollar and
 * latency, and the best configuration, and drawn in an HTML report (latency against throughput per
 * configuration, the frontier, the best).
 *
 * <p>Entry points: {@link io.blis.cli.sweep.SweepGrid} (the grid file), {@link
 * io.blis.cli.sweep.Sweep} (running it), {@link io.blis.cli.sweep.SweepTable} (the table),
 * {@link io.blis.cli.sweep.PriceTable} (GPU prices). The file formats and every output column
 * are documented in docs/capacity.md, section Sweeps.
 */
package io.blis.cli.sweep;
