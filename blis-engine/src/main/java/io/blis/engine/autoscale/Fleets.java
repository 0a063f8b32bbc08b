package io.blis.engine.autoscale;

import io.blis.api.Autoscaler;
import io.blis.api.InstanceSnapshot;
import io.blis.engine.result.AutoscaleReport;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The autoscaled pools of one simulation, each a {@link Fleet} with its own scaler, replicas,
 * nodes and ticks over its own contiguous range of the cluster's instances (as Kubernetes runs
 * one HPA per Deployment). The engine sees one set of routable instances, one control-plane
 * event stream and one report.
 *
 * <p>With one pool over every instance (the common case) everything goes to its fleet as it is.
 * With several, each pool's scaler sees only its own replicas, the arrivals that may go to them
 * and the requests that ended on them; the report sums the pools (replicas and nodes over time,
 * GPU hours, cost), counts every request once in the hours, and lists each pool's own report.
 */
public final class Fleets {

  /**
   * One autoscaled pool.
   *
   * @param name the pool's name
   * @param first its first instance
   * @param count its instances (its most replicas)
   * @param config how it may grow and shrink
   * @param scaler what decides
   * @param scalerName the scaler's name in the report
   * @param nodePool the node pool it places its replicas on, shared with the other pools naming it
   *     (their node settings must agree); null for a node pool of its own
   */
  public record Pool(String name, int first, int count, FleetConfig config, Autoscaler scaler, String scalerName,
      String nodePool) {}

  private final Fleet.Host host;
  private final Fleet[] fleets;
  private final int[] first;
  private final String[] names;
  /** The node pools, each once. */
  private final List<NodePool> nodePools = new ArrayList<>();
  /** By instance: its fleet, or -1 for an instance that is always routable. */
  private final int[] fleetOf;
  /** With one fleet over every instance: its routable array is the cluster's. */
  private final boolean single;
  private int[] routable;
  private final boolean[] isRoutable;
  private boolean started;
  private final IdentityHashMap<int[], int[]> routableAmong = new IdentityHashMap<>();
  private final IdentityHashMap<int[], int[]> fleetsAmong = new IdentityHashMap<>();
  // the sum over several fleets
  private final HourTally hours = new HourTally();
  private long arrivalsWhileShort;
  private int peakHeld;
  private int peakNodes;

  /**
   * @param pools the autoscaled pools, at least one, their ranges disjoint within {@code instances}
   * @param instances the cluster's instances; those of no pool are always routable
   * @param host the engine, with the cluster's instance indices
   */
  public Fleets(List<Pool> pools, int instances, Fleet.Host host) {
    if (pools.isEmpty()) {
      throw new IllegalArgumentException("autoscaling: no pool to scale");
    }
    this.host = host;
    this.fleets = new Fleet[pools.size()];
    this.first = new int[pools.size()];
    this.names = new String[pools.size()];
    this.fleetOf = new int[instances];
    Arrays.fill(fleetOf, -1);
    Map<String, NodePool> shared = new LinkedHashMap<>();
    for (int k = 0; k < fleets.length; k++) {
      Pool p = pools.get(k);
      if (p.first() < 0 || p.count() < 1 || p.first() + p.count() > instances) {
        throw new IllegalArgumentException("autoscaling: pool '" + p.name() + "' has instances " + p.first() + ".."
            + (p.first() + p.count() - 1) + " of " + instances);
      }
      for (int i = p.first(); i < p.first() + p.count(); i++) {
        if (fleetOf[i] >= 0) {
          throw new IllegalArgumentException("autoscaling: pools '" + names[fleetOf[i]] + "' and '" + p.name()
              + "' share instance " + i);
        }
        fleetOf[i] = k;
      }
      first[k] = p.first();
      names[k] = p.name();
      NodePool nodes = p.nodePool() == null ? null : shared.get(p.nodePool());
      if (nodes != null && !nodes.fits(p.config())) {
        throw new IllegalArgumentException("autoscaling: pool '" + p.name() + "' shares node pool '" + p.nodePool()
            + "' with other node settings (GPUs per node, node counts, provisioning delay, price)");
      }
      if (nodes == null) {
        nodes = new NodePool(p.config());
        nodePools.add(nodes);
        if (p.nodePool() != null) {
          shared.put(p.nodePool(), nodes);
        }
      }
      fleets[k] = new Fleet(p.config(), p.scaler(), p.scalerName(), p.count(), new Local(p.first()), nodes);
    }
    this.single = fleets.length == 1 && pools.get(0).count() == instances;
    this.isRoutable = new boolean[instances];
    this.routable = new int[0];
  }

  /** Places every pool's initial replicas and starts their ticks. */
  public void start() {
    for (Fleet f : fleets) {
      f.start();
    }
    started = true;
    rebuild();
  }

  /** The instances the router may choose now, ascending. */
  public int[] routable() {
    return single ? fleets[0].routable() : routable;
  }

  /**
   * The routable instances among {@code among} (instance indices, ascending), the same array
   * while they all are; null for null.
   */
  public int[] routableAmong(int[] among) {
    if (among == null) {
      return null;
    }
    int[] r = routableAmong.get(among);
    if (r == null) {
      r = Arrays.stream(among).filter(i -> isRoutable[i]).toArray();
      routableAmong.put(among, r.length == among.length ? among : r);
    }
    return r;
  }

  /**
   * A request arrived that may go to the instances {@code among} (null: to any): each pool among
   * them counts it for its rate.
   */
  public void onArrival(int[] among) {
    if (single) {
      fleets[0].onArrival();
      return;
    }
    boolean short_ = false;
    for (int k : fleetsAmong(among)) {
      fleets[k].onArrival();
      short_ |= fleets[k].shortOfReplicas();
    }
    if (short_) {
      arrivalsWhileShort++;
    }
  }

  private int[] fleetsAmong(int[] among) {
    int[] ks = fleetsAmong.get(among);
    if (ks == null) {
      TreeSet<Integer> set = new TreeSet<>();
      if (among == null) {
        for (int k = 0; k < fleets.length; k++) {
          set.add(k);
        }
      } else {
        for (int i : among) {
          if (fleetOf[i] >= 0) {
            set.add(fleetOf[i]);
          }
        }
      }
      ks = set.stream().mapToInt(Integer::intValue).toArray();
      fleetsAmong.put(among, ks);
    }
    return ks;
  }

  /**
   * A request that arrived at {@code arrivalUs} ended on instance {@code instance} (-1: on none),
   * prefilled on {@code prefillInstance} when that was another (-1 otherwise): completed or not,
   * within its targets or not, with its TTFT (microseconds, negative for none). Both instances'
   * pools count it (once each); a draining replica left empty frees its GPUs.
   */
  public void onFinished(int instance, int prefillInstance, long arrivalUs, boolean completed, boolean metSlo,
      long ttftUs) {
    if (single) {
      fleets[0].onFinished(arrivalUs, completed, metSlo, ttftUs);
      if (instance >= 0) {
        fleets[0].onRequestLeft(instance);
      }
      return;
    }
    hours.add(arrivalUs, completed, metSlo);
    int k = instance < 0 ? -1 : fleetOf[instance];
    if (k >= 0) {
      fleets[k].onFinished(arrivalUs, completed, metSlo, ttftUs);
      fleets[k].onRequestLeft(instance - first[k]);
    }
    int p = prefillInstance < 0 ? -1 : fleetOf[prefillInstance];
    if (p >= 0 && p != k) {
      fleets[p].onFinished(arrivalUs, completed, metSlo, ttftUs);
    }
  }

  /** Instance {@code instance} let go of something it held (a request's blocks): if draining and empty, it frees its GPUs. */
  public void onLeft(int instance) {
    int k = fleetOf[instance];
    if (k >= 0) {
      fleets[k].onRequestLeft(instance - first[k]);
    }
  }

  /** Whether {@code event} is one of the pools'. */
  public boolean owns(Object event) {
    return owner(event) != null;
  }

  /** Whether {@code event} (one of the pools') would do nothing: see {@link Fleet#idle}. */
  public boolean idle(Object event) {
    return owner(event).idle(event);
  }

  /** Hands {@code event} to the pool that scheduled it. */
  public void onEvent(Object event) {
    owner(event).onEvent(event);
  }

  private Fleet owner(Object event) {
    for (Fleet f : fleets) {
      if (f.owns(event)) {
        return f;
      }
    }
    return null;
  }

  /** The replicas now (with several pools, their sum). */
  public AutoscaleReport.Sample current() {
    if (fleets.length == 1) {
      return fleets[0].current();
    }
    List<AutoscaleReport.Sample> now = new ArrayList<>();
    for (Fleet f : fleets) {
      now.add(f.current());
    }
    return total(host.nowUs(), now, aliveNodes());
  }

  /** Each pool's replicas now, by its name, in the cluster's order. */
  public Map<String, AutoscaleReport.Sample> currentByPool() {
    Map<String, AutoscaleReport.Sample> out = new LinkedHashMap<>();
    for (int k = 0; k < fleets.length; k++) {
      out.put(names[k], fleets[k].current());
    }
    return out;
  }

  /** What the pools did and cost from time 0 to {@code endUs}. */
  public AutoscaleReport report(long endUs) {
    if (fleets.length == 1) {
      return fleets[0].report(endUs);
    }
    Map<String, AutoscaleReport> pools = new LinkedHashMap<>();
    TreeSet<String> scalers = new TreeSet<>();
    double replicaGpuHours = 0;
    long ups = 0;
    long downs = 0;
    for (int k = 0; k < fleets.length; k++) {
      AutoscaleReport r = fleets[k].report(endUs);
      pools.put(names[k], r);
      scalers.add(r.scaler());
      replicaGpuHours += r.replicaGpuHours();
      ups += r.scaleUps();
      downs += r.scaleDowns();
    }
    double nodeHours = 0;
    double gpuHours = 0;
    double cost = 0;
    for (NodePool np : nodePools) { // a shared node pool once
      double h = np.nodeHours(endUs);
      nodeHours += h;
      gpuHours += h * np.gpusPerNode();
      cost += h * np.costPerHour();
    }
    return new AutoscaleReport(String.join("+", scalers), sum(pools.values()), nodeHours, gpuHours,
        replicaGpuHours, cost, peakHeld, peakNodes, ups, downs, arrivalsWhileShort, hours.hours(), pools);
  }

  private int aliveNodes() {
    int n = 0;
    for (NodePool np : nodePools) {
      n += np.alive();
    }
    return n;
  }

  /**
   * The pools' timelines added up at every moment one of them has a sample (each holds its last
   * one between); the nodes are the node pools' at that moment, a shared one counted once.
   */
  private List<AutoscaleReport.Sample> sum(java.util.Collection<AutoscaleReport> reports) {
    TreeSet<Long> times = new TreeSet<>();
    for (AutoscaleReport r : reports) {
      r.timeline().forEach(s -> times.add(s.atUs()));
    }
    List<List<AutoscaleReport.Sample>> lines = reports.stream().map(AutoscaleReport::timeline).toList();
    int[] at = new int[lines.size()];
    List<AutoscaleReport.Sample> out = new ArrayList<>(times.size());
    for (long t : times) {
      List<AutoscaleReport.Sample> then = new ArrayList<>();
      for (int k = 0; k < lines.size(); k++) {
        List<AutoscaleReport.Sample> line = lines.get(k);
        while (at[k] + 1 < line.size() && line.get(at[k] + 1).atUs() <= t) {
          at[k]++;
        }
        if (line.get(at[k]).atUs() <= t) {
          then.add(line.get(at[k]));
        }
      }
      int nodes = 0;
      for (NodePool np : nodePools) {
        nodes += np.aliveAt(t);
      }
      out.add(total(t, then, nodes));
    }
    return out;
  }

  /** The pools' replicas in {@code samples} added up, at {@code atUs}, with {@code nodes} nodes (counted apart). */
  private static AutoscaleReport.Sample total(long atUs, List<AutoscaleReport.Sample> samples, int nodes) {
    int desired = 0;
    int ready = 0;
    int starting = 0;
    int draining = 0;
    for (AutoscaleReport.Sample s : samples) {
      desired += s.desired();
      ready += s.ready();
      starting += s.starting();
      draining += s.draining();
    }
    return new AutoscaleReport.Sample(atUs, desired, ready, starting, draining, nodes);
  }

  /** After a pool's ready replicas changed: the cluster's routable set, and the peaks of the sum. */
  private void rebuild() {
    if (!started) {
      return; // the pools' initial replicas are placed one pool at a time: counted once all are
    }
    routableAmong.clear();
    int n = 0;
    for (int i = 0; i < fleetOf.length; i++) {
      isRoutable[i] = fleetOf[i] < 0 || fleets[fleetOf[i]].isReady(i - first[fleetOf[i]]);
      n += isRoutable[i] ? 1 : 0;
    }
    if (single) {
      return; // the fleet's own routable array is the cluster's
    }
    int[] r = new int[n];
    int j = 0;
    for (int i = 0; i < fleetOf.length; i++) {
      if (isRoutable[i]) {
        r[j++] = i;
      }
    }
    routable = r;
    int held = 0;
    for (Fleet f : fleets) {
      held += f.held();
    }
    peakHeld = Math.max(peakHeld, held);
    peakNodes = Math.max(peakNodes, aliveNodes());
  }

  /** A pool's view of the engine: its instance {@code i} is the cluster's {@code offset + i}. */
  private final class Local implements Fleet.Host {
    private final int offset;

    Local(int offset) {
      this.offset = offset;
    }

    @Override
    public long nowUs() {
      return host.nowUs();
    }

    @Override
    public void schedule(long atUs, Object event) {
      host.schedule(atUs, event);
    }

    @Override
    public InstanceSnapshot snapshot(int i) {
      return host.snapshot(offset + i);
    }

    @Override
    public int inFlight(int i) {
      return host.inFlight(offset + i);
    }

    @Override
    public boolean drained() {
      return host.drained();
    }

    @Override
    public long kvCapacityTokens(int i) {
      return host.kvCapacityTokens(offset + i);
    }

    @Override
    public void slowSteps(int i, double factor, long untilUs) {
      host.slowSteps(offset + i, factor, untilUs);
    }

    @Override
    public void routableChanged() {
      rebuild();
    }
  }
}
