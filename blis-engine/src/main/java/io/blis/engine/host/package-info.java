/**
 * The host (CPU) side of a vLLM engine step by release: {@link io.blis.engine.host.HostTime} per
 * generation of the engine ({@link io.blis.engine.host.HostTimes}), and a latency-model decorator
 * that adds it to the GPU's step time when the engine schedules synchronously, or lets it hide
 * behind the GPU when it schedules ahead ({@link io.blis.engine.host.HostBoundModel}).
 */
package io.blis.engine.host;
