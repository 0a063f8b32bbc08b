package io.blis.cli.observe;

/**
 * How a run went, as the client counted it.
 *
 * @param durationUs from the start to the end of the last request, microseconds
 * @param sent requests sent
 * @param ok requests answered completely
 * @param failed requests that ended otherwise (including those stopped in flight)
 * @param notSent requests the workload had produced that were never sent (the run was stopped)
 * @param stopped whether {@link Observer#stop()} ended the run before the workload did
 * @param lateSends requests sent more than {@link Observer#LATE_US} after their time
 * @param maxLatenessUs the latest send against its time, microseconds
 * @param metricsScrapes scrapes of the server's metrics that succeeded
 * @param metricsFailures scrapes that failed
 * @param serverValues the server's values not recorded as given, by {@link ServerChecks.Kind#key()}
 *     (only kinds that happened)
 */
public record ObservedRun(long durationUs, long sent, long ok, long failed, long notSent,
    boolean stopped, long lateSends, long maxLatenessUs, int metricsScrapes, int metricsFailures,
    java.util.Map<String, Long> serverValues) {

  public ObservedRun {
    serverValues = java.util.Map.copyOf(serverValues);
  }
}
