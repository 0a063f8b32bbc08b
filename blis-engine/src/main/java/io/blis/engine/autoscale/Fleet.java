package io.blis.engine.autoscale;

import io.blis.api.Autoscaler;
import io.blis.api.InstanceSnapshot;
import io.blis.api.ScalingView;
import io.blis.engine.result.AutoscaleReport;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One autoscaled pool over a run: which of its instances hold GPUs and in which lifecycle state,
 * the nodes they sit on, the scaling ticks, and what it all cost. The engine drives it through
 * {@link Host} (clock, events, the instances' figures) and routes only to {@link #routable()}.
 *
 * <p>A replica's life: asked for at a tick; placed on a node with free GPUs, or on a new node
 * that is ready after the provisioning delay (at most {@code maxNodes}); loads its weights
 * ({@code loadingUs}); warms up ({@code warmupUs}); takes requests (ready); when removed, takes no
 * new requests and finishes the ones it holds (draining), then frees its GPUs. A node whose GPUs
 * are all free is released. Replicas still starting are removed first (newest first), then ready
 * ones holding the fewest requests. Scale-down never loses a request.
 */
public final class Fleet {

  /** What the engine lends the fleet. */
  public interface Host {
    /** The simulated clock, microseconds. */
    long nowUs();

    /** Schedules {@code event} for {@link Fleet#onEvent} at {@code atUs}. */
    void schedule(long atUs, Object event);

    /** Instance {@code i}'s figures as the routers see them. */
    InstanceSnapshot snapshot(int i);

    /** Requests instance {@code i} holds now (queued, running, on their way to it). */
    int inFlight(int i);

    /** Whether nothing more will arrive and nothing is left to finish: the ticks may stop. */
    boolean drained();

    /** Instance {@code i}'s KV cache, tokens. */
    long kvCapacityTokens(int i);

    /**
     * Makes instance {@code i}'s steps that start before {@code untilUs} take {@code factor}
     * times as long (a replica's first-requests slowdown after its warm-up). The default ignores it.
     */
    default void slowSteps(int i, double factor, long untilUs) {}

    /** The ready replicas changed (one became ready, began draining or was released). The default ignores it. */
    default void routableChanged() {}
  }

  /** A replica's lifecycle state. */
  public enum State { OFF, WAITING_NODE, LOADING, WARMING, READY, DRAINING }

  /** This fleet's scaling tick (each fleet has its own, so that several can share one event queue). */
  private final Object tick = new Object();

  private record Step(Fleet fleet, int instance, long epoch) {}

  private final FleetConfig cfg;
  private final Autoscaler scaler;
  private final String scalerName;
  private final Host host;
  private final State[] state;
  private final int[] nodeOf;
  private final long[] epoch;
  private final long[] heldSinceUs;
  private final NodePool nodes;
  private int[] routable = new int[0];
  private int desired;
  private long arrivals;
  private double ttftSumMs;
  private long ttftCount;
  private long arrivalsWhileShort;
  private long scaleUps;
  private long scaleDowns;
  private int peakHeld;
  private double replicaGpuUs;
  private final ArrayDeque<long[]> recommendations = new ArrayDeque<>();
  private final List<AutoscaleReport.Sample> timeline = new ArrayList<>();
  private final HourTally hours = new HourTally();
  private final View view = new View();

  public Fleet(FleetConfig cfg, Autoscaler scaler, String scalerName, int instances, Host host) {
    this(cfg, scaler, scalerName, instances, host, new NodePool(cfg));
  }

  /** A fleet on {@code nodes}, which other fleets may share. */
  Fleet(FleetConfig cfg, Autoscaler scaler, String scalerName, int instances, Host host, NodePool nodes) {
    if (instances != cfg.maxReplicas()) {
      throw new IllegalArgumentException("autoscaling: the pool must hold its " + cfg.maxReplicas()
          + " most replicas as instances, got " + instances);
    }
    this.cfg = cfg;
    this.scaler = scaler;
    this.scalerName = scalerName;
    this.host = host;
    this.state = new State[instances];
    Arrays.fill(state, State.OFF);
    this.nodeOf = new int[instances];
    Arrays.fill(nodeOf, -1);
    this.epoch = new long[instances];
    this.heldSinceUs = new long[instances];
    this.nodes = nodes;
    nodes.join(this::nodeReady);
  }

  /** Places the initial replicas, ready at time 0 on nodes ready at time 0, and starts the ticks. */
  public void start() {
    nodes.start();
    for (int i = 0; i < cfg.initialReplicas(); i++) {
      int n = nodes.withRoom(cfg.gpusPerReplica());
      if (n < 0) {
        n = nodes.addReady();
      }
      assign(i, n);
      state[i] = State.READY;
    }
    desired = cfg.initialReplicas();
    peakHeld = desired; // the initial replicas are held from time 0, though the first tick may remove some
    rebuildRoutable();
    sample();
    host.schedule(cfg.intervalUs(), tick);
  }

  /** The ready instances' indices, ascending: those the router may choose. */
  public int[] routable() {
    return routable;
  }

  /** A request arrived at the gateway. */
  public void onArrival() {
    arrivals++;
    if (shortOfReplicas()) {
      arrivalsWhileShort++;
    }
  }

  /** Whether fewer replicas are ready than are desired. */
  boolean shortOfReplicas() {
    return routable.length < desired;
  }

  /** Whether instance {@code i} (of this pool) is ready: the router may choose it. */
  boolean isReady(int i) {
    return state[i] == State.READY;
  }

  /**
   * A request that arrived at {@code arrivalUs} ended: completed or not, within its SLO class's
   * targets or not, with its TTFT (microseconds, negative when it had none).
   */
  public void onFinished(long arrivalUs, boolean completed, boolean metSlo, long ttftUs) {
    hours.add(arrivalUs, completed, metSlo);
    if (completed && ttftUs >= 0) {
      ttftSumMs += ttftUs / 1000.0;
      ttftCount++;
    }
  }

  /** A request left instance {@code i}: a draining instance that is now empty frees its GPUs. */
  public void onRequestLeft(int i) {
    if (state[i] == State.DRAINING && host.inFlight(i) == 0) {
      release(i);
    }
  }

  /**
   * Whether {@code event} would do nothing: a scaling tick once nothing more will arrive and
   * nothing is left to finish (the engine then leaves its clock where it is, so that the run, and
   * its GPU hours, do not end later for it).
   */
  public boolean idle(Object event) {
    return event == tick && host.drained();
  }

  /** A fleet event scheduled through the host. */
  public void onEvent(Object event) {
    if (event == tick) {
      tick();
    } else if (event instanceof NodePool.Ready r) {
      nodes.onReady(r);
    } else if (event instanceof Step s) {
      if (epoch[s.instance()] != s.epoch()) {
        return; // cancelled while starting
      }
      if (state[s.instance()] == State.LOADING) {
        warm(s.instance());
      } else if (state[s.instance()] == State.WARMING) {
        ready(s.instance());
      }
    } else {
      throw new IllegalStateException("not a fleet event: " + event);
    }
  }

  /** Whether {@code event} is one this fleet scheduled (a node's readiness: one of its node pool's). */
  boolean owns(Object event) {
    return event == tick || event instanceof NodePool.Ready r && r.pool() == nodes
        || event instanceof Step s && s.fleet() == this;
  }

  /** Node {@code n} of its node pool is ready: the replicas that waited for it load their weights. */
  void nodeReady(int n) {
    for (int i = 0; i < state.length; i++) {
      if (state[i] == State.WAITING_NODE && nodeOf[i] == n) {
        load(i);
      }
    }
  }

  // ---------------------------------------------------------------- ticks

  private void tick() {
    long now = host.nowUs();
    view.fill();
    int raw = Math.max(cfg.minReplicas(), Math.min(cfg.maxReplicas(), scaler.desiredReplicas(view)));
    recommendations.addLast(new long[] {now, raw});
    long keep = Math.max(cfg.scaleUpWindowUs(), cfg.scaleDownWindowUs());
    while (recommendations.peekFirst()[0] < now - keep) {
      recommendations.removeFirst();
    }
    int target = desired;
    if (raw > desired) {
      // scale up to the lowest recommendation of the up window (Kubernetes' stabilization)
      int low = raw;
      for (long[] r : recommendations) {
        if (r[0] >= now - cfg.scaleUpWindowUs()) {
          low = (int) Math.min(low, r[1]);
        }
      }
      // and by at most max(100%, 4 replicas) a tick (Kubernetes' default scale-up policy)
      target = Math.min(Math.max(desired, low), desired + Math.max(4, desired));
    } else if (raw < desired) {
      int high = raw;
      for (long[] r : recommendations) {
        if (r[0] >= now - cfg.scaleDownWindowUs()) {
          high = (int) Math.max(high, r[1]);
        }
      }
      target = Math.min(desired, high);
    }
    if (target > desired) {
      scaleUps++;
    } else if (target < desired) {
      scaleDowns++;
    }
    desired = target;
    adjust();
    arrivals = 0;
    ttftSumMs = 0;
    ttftCount = 0;
    sample();
    if (!host.drained()) {
      host.schedule(now + cfg.intervalUs(), tick);
    }
  }

  /** Adds or removes replicas until those held (ready or starting) are {@link #desired}. */
  private void adjust() {
    int held = held();
    for (int i = 0; i < state.length && held < desired; i++) {
      if (state[i] == State.OFF) {
        int n = nodes.withRoom(cfg.gpusPerReplica());
        if (n < 0) {
          n = nodes.add(host::schedule, host.nowUs());
          if (n < 0) {
            break; // no room: the shortfall stays until a node frees
          }
        }
        assign(i, n);
        if (nodes.ready(n)) {
          load(i);
        } else {
          state[i] = State.WAITING_NODE;
        }
        held++;
      }
    }
    // remove: starting replicas first, newest first; then ready ones holding the fewest requests
    for (int i = state.length - 1; i >= 0 && held > desired; i--) {
      if (starting(state[i])) {
        release(i);
        held--;
      }
    }
    while (held > desired) {
      int victim = -1;
      for (int i = state.length - 1; i >= 0; i--) {
        if (state[i] == State.READY && (victim < 0 || host.inFlight(i) < host.inFlight(victim))) {
          victim = i;
        }
      }
      if (victim < 0) {
        break;
      }
      state[victim] = State.DRAINING;
      held--;
      if (host.inFlight(victim) == 0) {
        release(victim);
      }
    }
    rebuildRoutable();
    peakHeld = Math.max(peakHeld, held());
  }

  /** Replicas held now: ready or starting (not draining). */
  int held() {
    return count(s -> s != State.OFF && s != State.DRAINING);
  }

  /** Nodes its node pool holds now. */
  private int aliveNodes() {
    return nodes.alive();
  }

  private void assign(int i, int n) {
    nodeOf[i] = n;
    nodes.take(n, cfg.gpusPerReplica());
    heldSinceUs[i] = host.nowUs();
    epoch[i]++;
  }

  private void load(int i) {
    state[i] = State.LOADING;
    if (cfg.loadingUs() == 0) {
      warm(i);
    } else {
      host.schedule(host.nowUs() + cfg.loadingUs(), new Step(this, i, epoch[i]));
    }
  }

  private void warm(int i) {
    state[i] = State.WARMING;
    if (cfg.warmupUs() == 0) {
      ready(i);
    } else {
      host.schedule(host.nowUs() + cfg.warmupUs(), new Step(this, i, epoch[i]));
    }
  }

  private void ready(int i) {
    state[i] = State.READY;
    if (cfg.warmupSlowdown() > 1 && cfg.slowdownUs() > 0) {
      host.slowSteps(i, cfg.warmupSlowdown(), host.nowUs() + cfg.slowdownUs());
    }
    rebuildRoutable();
  }

  private void release(int i) {
    state[i] = State.OFF;
    epoch[i]++;
    replicaGpuUs += (double) (host.nowUs() - heldSinceUs[i]) * cfg.gpusPerReplica();
    nodes.free(nodeOf[i], cfg.gpusPerReplica(), host.nowUs());
    nodeOf[i] = -1;
    rebuildRoutable();
  }

  private void rebuildRoutable() {
    int[] r = new int[count(st -> st == State.READY)];
    int k = 0;
    for (int i = 0; i < state.length; i++) {
      if (state[i] == State.READY) {
        r[k++] = i;
      }
    }
    routable = r;
    host.routableChanged();
  }


  /** Whether a replica in state {@code s} is asked for and not yet ready. */
  private static boolean starting(State s) {
    return s == State.WAITING_NODE || s == State.LOADING || s == State.WARMING;
  }

  private int count(java.util.function.Predicate<State> p) {
    int n = 0;
    for (State s : state) {
      n += p.test(s) ? 1 : 0;
    }
    return n;
  }

  /** The pool now. */
  public AutoscaleReport.Sample current() {
    return now(host.nowUs());
  }

  /** The pool now, at {@code atUs}. */
  private AutoscaleReport.Sample now(long atUs) {
    return new AutoscaleReport.Sample(atUs, desired, routable.length, count(Fleet::starting),
        count(s -> s == State.DRAINING), aliveNodes());
  }

  private void sample() {
    timeline.add(now(host.nowUs()));
  }

  /** What the fleet did and cost from time 0 to {@code endUs}. */
  public AutoscaleReport report(long endUs) {
    double replicaUs = replicaGpuUs;
    for (int i = 0; i < state.length; i++) {
      if (state[i] != State.OFF) {
        replicaUs += (double) (endUs - heldSinceUs[i]) * cfg.gpusPerReplica();
      }
    }
    double nodeHours = nodes.nodeHours(endUs);
    List<AutoscaleReport.Sample> line = new ArrayList<>(timeline);
    if (line.isEmpty() || line.get(line.size() - 1).atUs() != endUs) {
      line.add(now(endUs));
    }
    return new AutoscaleReport(scalerName, line, nodeHours, nodeHours * nodes.gpusPerNode(),
        replicaUs / 3.6e9, nodeHours * nodes.costPerHour(), peakHeld, nodes.peak(), scaleUps, scaleDowns,
        arrivalsWhileShort, hours.hours());
  }

  /** The pool as the scaler sees it at a tick: means over the ready replicas. */
  private final class View implements ScalingView {
    private long now;
    private int ready;
    private int starting;
    private double waiting;
    private double running;
    private double kv;

    void fill() {
      now = host.nowUs();
      ready = 0;
      starting = 0;
      double w = 0;
      double r = 0;
      double k = 0;
      for (int i = 0; i < state.length; i++) {
        if (state[i] == State.READY) {
          InstanceSnapshot s = host.snapshot(i);
          ready++;
          w += s.queueDepth();
          r += s.runningBatchSize();
          k += s.kvUtilization();
        } else if (starting(state[i])) {
          starting++;
        }
      }
      waiting = ready == 0 ? 0 : w / ready;
      running = ready == 0 ? 0 : r / ready;
      kv = ready == 0 ? 0 : k / ready;
    }

    @Override
    public long nowUs() {
      return now;
    }

    @Override
    public long intervalUs() {
      return cfg.intervalUs();
    }

    @Override
    public int readyReplicas() {
      return ready;
    }

    @Override
    public int startingReplicas() {
      return starting;
    }

    @Override
    public int currentReplicas() {
      return desired;
    }

    @Override
    public int minReplicas() {
      return cfg.minReplicas();
    }

    @Override
    public int maxReplicas() {
      return cfg.maxReplicas();
    }

    @Override
    public double meanWaiting() {
      return waiting;
    }

    @Override
    public double meanRunning() {
      return running;
    }

    @Override
    public double meanKvUtilization() {
      return kv;
    }

    @Override
    public double arrivalRatePerS() {
      return arrivals / (cfg.intervalUs() / 1e6);
    }

    @Override
    public double ttftMeanMs() {
      return ttftCount == 0 ? Double.NaN : ttftSumMs / ttftCount;
    }

    @Override
    public long kvCapacityTokens() {
      return host.kvCapacityTokens(0); // the replicas of one pool are alike
    }
  }
}
