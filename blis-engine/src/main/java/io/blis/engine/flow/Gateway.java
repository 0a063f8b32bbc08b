package io.blis.engine.flow;

import io.blis.api.ClusterView;
import io.blis.engine.policy.Priorities;
import io.blis.engine.result.GatewayReport;

/**
 * The gateway's flow control over a run: requests join the {@link GatewayQueue} as they are
 * admitted, leave it for the router one at a time while the pool is not saturated (on every
 * arrival and at every dispatch tick while any wait), or end there: rejected, shed, expired or
 * timed out. The engine drives it through {@link Host}, as it drives an autoscaled fleet.
 *
 * @param <T> the engine's request
 */
public final class Gateway<T> {

  /** What the engine lends the gateway. */
  public interface Host<T> {
    /** The simulated clock, microseconds. */
    long nowUs();

    /** Schedules {@code event} for {@link Gateway#onEvent} at {@code atUs}. */
    void schedule(long atUs, Object event);

    /** The routers' view of the pool, refreshed as routing refreshes it. */
    ClusterView cluster();

    /** Sends {@code request} on to routing. */
    void route(T request);

    /** Ends {@code request} at {@code endUs}: rejected (with {@code reason}) or timed out. */
    void end(T request, boolean timedOut, long endUs, String reason);

    /** The request's SLO class. */
    String sloClass(T request);

    /** The request's tenant ("" for none). */
    String tenant(T request);

    /** The request's client deadline, microseconds; 0 for none. */
    long deadlineUs(T request);
  }

  /** Reason of a request that found its band or the queue full. */
  public static final String FULL = "gateway queue full";
  /** Reason of a request displaced by a more urgent one. */
  public static final String SHED = "shed from the gateway queue";
  /** Reason of a request that waited past the request time-to-live. */
  public static final String EXPIRED = "gateway request TTL expired";

  private static final Object TICK = new Object();

  private final FlowControl config;
  private final Host<T> host;
  private final GatewayQueue<T> queue;
  private final GatewayStats stats;
  private boolean tickPending;

  public Gateway(FlowControl config, boolean streamingMetrics, Host<T> host) {
    this.config = config;
    this.host = host;
    this.queue = new GatewayQueue<>(config);
    this.stats = new GatewayStats(streamingMetrics);
  }

  /** Requests waiting now. */
  public int queued() {
    return queue.size();
  }

  /** {@code r} reaches the gateway: it joins its band's queue (or not), then one may leave. */
  public void admit(T r) {
    long now = host.nowUs();
    String cls = host.sloClass(r);
    stats.arrived(cls);
    GatewayQueue.Offer<T> o = queue.offer(r, Priorities.sloClassPriority(cls), host.tenant(r), cls, now);
    if (!o.accepted()) {
      stats.ended(cls, GatewayStats.End.REJECTED, 0);
      host.end(r, false, now, FULL);
      return;
    }
    if (o.shed() != null) {
      stats.ended(o.shed().sloClass(), GatewayStats.End.SHED, 0);
      host.end(o.shed().item(), false, now, SHED);
    }
    long ttlEnd = config.requestTtlUs() > 0 ? Math.addExact(now, config.requestTtlUs()) : 0;
    long deadline = host.deadlineUs(r);
    long end = deadline > 0 && (ttlEnd == 0 || deadline < ttlEnd) ? deadline : ttlEnd;
    if (end > 0) {
      host.schedule(end, o.entry());
    }
    dispatch();
  }

  /** Whether {@code event} is one of the gateway's. */
  public static boolean isGatewayEvent(Object event) {
    return event == TICK || event instanceof GatewayQueue.Entry<?>;
  }

  /**
   * Whether {@code event} would do nothing: a dispatch tick with nobody queued, or the time-to-live
   * of a request that already left the queue. Such an event is consumed here (the engine then
   * leaves its clock where it is, so that a run does not end later for it).
   */
  public boolean consumeIfIdle(Object event) {
    if (event == TICK && queue.size() == 0) {
      tickPending = false;
      return true;
    }
    return event instanceof GatewayQueue.Entry<?> e && !e.queued();
  }

  /** A dispatch tick, or the time-to-live or client deadline of a queued request. */
  @SuppressWarnings("unchecked")
  public void onEvent(Object event) {
    if (event == TICK) {
      tickPending = false;
      dispatch();
      return;
    }
    GatewayQueue.Entry<T> e = (GatewayQueue.Entry<T>) event;
    if (!queue.remove(e)) {
      return; // dispatched or shed before
    }
    long deadline = host.deadlineUs(e.item());
    if (deadline > 0 && deadline <= host.nowUs()) {
      stats.ended(e.sloClass(), GatewayStats.End.TIMED_OUT, 0);
      host.end(e.item(), true, deadline, "");
    } else {
      stats.ended(e.sloClass(), GatewayStats.End.EXPIRED, 0);
      host.end(e.item(), false, host.nowUs(), EXPIRED);
    }
  }

  /**
   * Sends one queued request to routing if the pool is not saturated; while requests wait, a
   * tick comes back after the dispatch interval (llm-d's dispatch loop).
   */
  private void dispatch() {
    if (queue.size() == 0) {
      return;
    }
    if (config.saturation(host.cluster()) < 1.0) {
      GatewayQueue.Entry<T> e = queue.poll();
      stats.ended(e.sloClass(), GatewayStats.End.DISPATCHED, host.nowUs() - e.enqueuedUs());
      host.route(e.item());
    }
    if (queue.size() > 0 && !tickPending) {
      tickPending = true;
      host.schedule(Math.addExact(host.nowUs(), config.dispatchTickUs()), TICK);
    }
  }

  /** The requests still waiting, each counted as left over by {@code leftover}, for the end of a run. */
  public void forEachQueued(java.util.function.Consumer<T> leftover) {
    for (GatewayQueue.Entry<T> e : queue.queued()) {
      leftover.accept(e.item());
      stats.stillQueued(e.sloClass());
    }
  }

  /** What the gateway did. */
  public GatewayReport report() {
    return stats.report(config, queue.maxSize());
  }
}
