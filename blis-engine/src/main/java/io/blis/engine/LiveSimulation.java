package io.blis.engine;

import io.blis.engine.result.InstanceStatus;
import io.blis.engine.result.SimulationResult;
import io.blis.workload.RequestSpec;
import java.util.List;
import java.util.Map;

/**
 * A simulation driven from outside, one step of the clock at a time, for requests that are not
 * known in advance: a simulated server that receives them live ({@code blis serve}), or a test
 * that interleaves arrivals with inspection. Built by {@link Simulation.Builder#buildLive()}; the
 * engine, scheduling and metrics are those of {@link Simulation}.
 *
 * <p>The caller owns the clock: {@link #advanceTo} processes every event up to a time and moves
 * the clock there; {@link #submit} adds a request arriving at its {@code arrivalTimeUs}, which
 * must not be before the clock. Tokens, completions and steps reach the {@link EngineListener}
 * given to the builder as they happen. Not thread-safe: one thread drives it.
 */
public final class LiveSimulation {

  private final Engine engine;
  private boolean ended;

  LiveSimulation(Engine engine) {
    this.engine = engine;
    engine.trackLiveRequests();
  }

  /** The simulated clock, microseconds. */
  public long nowUs() {
    return engine.nowUs();
  }

  /** Time of the next scheduled event, microseconds, or {@link Long#MAX_VALUE} when idle. */
  public long nextEventUs() {
    return engine.nextEventUs();
  }

  /**
   * Processes every event at or before {@code timeUs} in order, then sets the clock to {@code
   * timeUs}.
   *
   * @throws IllegalArgumentException if {@code timeUs} is before the clock
   */
  public void advanceTo(long timeUs) {
    checkOpen();
    engine.advanceTo(timeUs);
  }

  /**
   * Adds a request; it arrives at {@code request.arrivalTimeUs()} (usually {@link #nowUs()}).
   *
   * @throws IllegalArgumentException if it arrives before the clock
   */
  public void submit(RequestSpec request) {
    checkOpen();
    engine.submit(request);
  }

  /**
   * The client of request {@code id} went away: a request still in the engine ends now as timed
   * out and frees its KV blocks, as vLLM aborts a request whose connection closed.
   *
   * @return whether the request was still in the engine
   */
  public boolean abort(long id) {
    checkOpen();
    return engine.abort(id);
  }

  /**
   * The autoscaled pool's replicas now (desired, ready, starting, draining, nodes), if it has one;
   * with several autoscaled pools, their sum.
   */
  public java.util.Optional<io.blis.engine.result.AutoscaleReport.Sample> replicas() {
    return java.util.Optional.ofNullable(engine.fleetNow());
  }

  /** Each autoscaled pool's replicas now, by its name in the cluster's order; empty without autoscaling. */
  public Map<String, io.blis.engine.result.AutoscaleReport.Sample> replicasByPool() {
    return engine.fleetNowByPool();
  }

  /** Requests waiting in the gateway's flow-control queue now, if it has one. */
  public java.util.OptionalInt gatewayQueued() {
    int n = engine.gatewayQueued();
    return n < 0 ? java.util.OptionalInt.empty() : java.util.OptionalInt.of(n);
  }

  /**
   * The name of the model each instance serves, in instance order, when the fleet routes by model
   * ({@link Simulation.Builder#models}); null entries otherwise.
   */
  public List<String> servedModels() {
    return engine.servedModels();
  }

  /** What each instance holds now, in instance order. */
  public List<InstanceStatus> status() {
    return engine.status();
  }

  /**
   * Ends the run and summarizes it, as {@link Simulation#run()} does at the end of a workload;
   * requests still queued or running are counted as left over. The simulation cannot be driven
   * afterwards.
   */
  public SimulationResult end() {
    checkOpen();
    ended = true;
    return engine.end();
  }

  private void checkOpen() {
    if (ended) {
      throw new IllegalStateException("the live simulation has ended");
    }
  }
}
