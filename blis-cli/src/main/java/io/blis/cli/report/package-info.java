/**
 * Self-contained HTML pages of charts for the reports of {@code blis validate} and {@code blis
 * sweep}: {@link io.blis.cli.report.ChartPage} (text, tables, Vega-Lite charts with inline data,
 * the chart libraries inlined from their WebJars, and the checks a headless browser reads back) and
 * {@link io.blis.cli.report.VegaLite} (small builders of the chart JSON). The simulation core
 * does not use this package; the reports do.
 */
package io.blis.cli.report;
