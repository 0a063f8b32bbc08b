/**
 * inference-perf shared-prefix profiles: parsing ({@link
 * io.blis.workload.inferenceperf.InferencePerfProfiles}) and the request streams inference-perf
 * sent, regenerated or replayed from ground truth ({@link
 * io.blis.workload.inferenceperf.InferencePerfWorkload}).
 */
package io.blis.workload.inferenceperf;
