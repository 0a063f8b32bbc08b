/** The YAML workload spec ({@link io.blis.workload.spec.WorkloadSpec}); see docs/workloads.md. */
package io.blis.workload.spec;
