/**
 * The frozen service-provider interface of BLIS.
 *
 * <p>Five plugin points, each discovered with {@link java.util.ServiceLoader} through a provider
 * interface and selected by name:
 *
 * <ul>
 *   <li>{@link io.blis.api.LatencyModel} via {@link io.blis.api.LatencyModelProvider}: how long one
 *       engine step takes, plus the per-request processing times around it;
 *   <li>{@link io.blis.api.Scheduler} via {@link io.blis.api.SchedulerProvider}: the order of an
 *       instance's waiting queue and the choice of preemption victim;
 *   <li>{@link io.blis.api.Router} via {@link io.blis.api.RouterProvider}: which instance of a
 *       cluster receives a request;
 *   <li>{@link io.blis.api.AdmissionPolicy} via {@link io.blis.api.AdmissionPolicyProvider}: whether
 *       a request enters the cluster at all;
 *   <li>{@link io.blis.api.PriorityPolicy} via {@link io.blis.api.PriorityPolicyProvider}: the
 *       scheduling priority of each request.
 * </ul>
 *
 * <p>Plugins see only read-only views ({@link io.blis.api.RequestView}, {@link
 * io.blis.api.BatchView}, {@link io.blis.api.InstanceSnapshot}); only the engine mutates state.
 * All times are integer microseconds unless a name says otherwise. This module depends on the JDK
 * only. New methods are only ever added as {@code default} methods.
 */
package io.blis.api;
