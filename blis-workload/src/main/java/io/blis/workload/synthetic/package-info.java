/**
 * Synthetic workloads: clients with arrival processes ({@link
 * io.blis.workload.synthetic.ArrivalProcess}, gaps in seconds), length distributions ({@link
 * io.blis.workload.synthetic.LengthDistribution}, tokens), sessions and activity windows, merged
 * lazily by {@link io.blis.workload.synthetic.SyntheticWorkload}.
 */
package io.blis.workload.synthetic;
