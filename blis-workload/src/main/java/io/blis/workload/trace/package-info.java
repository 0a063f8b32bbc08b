/**
 * Traces: the BLIS trace format ({@link io.blis.workload.trace.TraceWriter}, {@link
 * io.blis.workload.trace.TraceReader}) and the ground-truth CSVs of real runs ({@link
 * io.blis.workload.trace.GroundTruthTrace}). All readers stream and fail on the first bad row
 * with the file, line and field.
 */
package io.blis.workload.trace;
