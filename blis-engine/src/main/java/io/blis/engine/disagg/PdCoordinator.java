package io.blis.engine.disagg;

import io.blis.engine.metrics.ValueStore;
import io.blis.engine.result.DisaggregationReport;
import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Carries disaggregated requests from their prefill to their decode instance: those waiting for a
 * decode instance with room (first come, first served), and the KV transfers in flight over the
 * links between instances ({@link Links}). The engine drives it through {@link Host}, as it
 * drives the gateway and the autoscaled fleet. See {@link Disaggregation} for the request's path.
 *
 * @param <T> the engine's request
 */
public final class PdCoordinator<T> {

  /** What the engine lends the coordinator. */
  public interface Host<T> {
    /** The simulated clock, microseconds. */
    long nowUs();

    /** Schedules {@code event} for {@link PdCoordinator#onEvent} at {@code atUs}. */
    void schedule(long atUs, Object event);

    /**
     * Chooses a decode instance for {@code request} (its decode router first, then any other
     * decode instance with room) and reserves its prompt's blocks there.
     *
     * @return the instance, or -1 when none has room now
     */
    int placeDecode(T request);

    /** The instance {@code request} was prefilled on. */
    int prefillInstance(T request);

    /** Prompt tokens whose KV moves to the instance {@link #placeDecode} reserved. */
    int tokensToMove(T request);

    /** The KV of {@code request} arrived: the prefill instance's blocks go, the decode instance queues it. */
    void arrived(T request);
  }

  private static final Object RETRY = new Object();

  private record Tick(long generation) {}

  private record Done(Links.Flow<?> flow) {}

  private final Disaggregation config;
  private final Host<T> host;
  private final Role[] roles;
  private final Disaggregation.PoolKv[] kv;
  private final int[] node;
  private final Links<T> links;
  private final int globalPort;
  private final ArrayDeque<T> waiting = new ArrayDeque<>();
  /** Transfers by request, in the order they started (requests are compared by identity). */
  private final Map<T, Links.Flow<T>> moving = new LinkedHashMap<>();
  private boolean retryPending;
  private long generation;
  private long disaggregated;
  private long keptWhole;
  private long transferred;
  private long waitedForDecode;
  private double transferredBytes;
  private final ValueStore prefillQueue;
  private final ValueStore prefill;
  private final ValueStore decodeWait;
  private final ValueStore transfer;
  private final ValueStore firstDecode;
  private final ValueStore ttft;

  /**
   * @param poolOfInstance the pool of each instance, by instance index
   */
  public PdCoordinator(Disaggregation config, List<String> poolOfInstance, boolean streamingMetrics,
      Host<T> host) {
    this.config = Objects.requireNonNull(config, "config");
    this.host = Objects.requireNonNull(host, "host");
    int n = poolOfInstance.size();
    roles = new Role[n];
    kv = new Disaggregation.PoolKv[n];
    boolean anyPrefill = false;
    boolean anyDecode = false;
    for (int i = 0; i < n; i++) {
      String pool = poolOfInstance.get(i);
      roles[i] = config.role(pool);
      kv[i] = config.pools().get(pool);
      if (kv[i] == null) {
        throw new IllegalArgumentException("disaggregation: no KV figures for pool '" + pool + "'");
      }
      anyPrefill |= roles[i].prefills();
      anyDecode |= roles[i].decodes();
    }
    if (!anyDecode) {
      throw new IllegalArgumentException("disaggregation: no pool decodes (give a pool the role decode or both)");
    }
    if (config.decider() != Decider.NEVER && !anyPrefill) {
      throw new IllegalArgumentException("disaggregation: the " + config.decider().label()
          + " decider needs a pool that prefills (role prefill or both)");
    }
    node = placeOnNodes(kv);
    globalPort = 2 * n;
    links = new Links<>(2 * n + 1);
    prefillQueue = ValueStore.create(streamingMetrics);
    prefill = ValueStore.create(streamingMetrics);
    decodeWait = ValueStore.create(streamingMetrics);
    transfer = ValueStore.create(streamingMetrics);
    firstDecode = ValueStore.create(streamingMetrics);
    ttft = ValueStore.create(streamingMetrics);
  }

  /**
   * The node of each instance: instances fill nodes of their GPU type in index order, one after
   * the other (an instance of more GPUs than a node has takes whole nodes of its own).
   */
  static int[] placeOnNodes(Disaggregation.PoolKv[] kv) {
    int[] out = new int[kv.length];
    int current = -1;
    int free = 0;
    String gpu = null;
    for (int i = 0; i < kv.length; i++) {
      int gpus = kv[i].gpusPerInstance();
      int perNode = kv[i].gpusPerNode();
      if (!kv[i].gpu().equals(gpu) || gpus > free) {
        current++;
        free = perNode;
        gpu = kv[i].gpu();
      }
      out[i] = current;
      if (gpus > perNode) {
        current += (gpus + perNode - 1) / perNode - 1;
        free = 0;
      } else {
        free -= gpus;
      }
    }
    return out;
  }

  /** The role of instance {@code i}. */
  public Role role(int i) {
    return roles[i];
  }

  /** The node instance {@code i} is placed on. */
  public int node(int i) {
    return node[i];
  }

  /**
   * Whether a request of {@code promptTokens} tokens, {@code cachedOnDecode} of them cached on the
   * best decode instance, is disaggregated; counted.
   */
  public boolean decide(int promptTokens, int cachedOnDecode) {
    boolean split = config.decider().disaggregates(promptTokens, cachedOnDecode, config.prefixThreshold());
    if (!split) {
      keptWhole++;
    }
    return split;
  }

  /** Counts a request served whole without asking the decider (no instance could take its prefill or decode). */
  public void keepWhole() {
    keptWhole++;
  }

  /** The decider needs the decode instances' cached prefixes of each request. */
  public boolean needsCachedPrefix() {
    return config.decider() == Decider.PREFIX_THRESHOLD;
  }

  /** {@code r}'s prefill ended: it waits for a decode instance with room, or its KV starts moving. */
  public void onPrefilled(T r) {
    disaggregated++;
    waiting.addLast(r);
    place();
    if (!waiting.isEmpty() && waiting.peekLast() == r) {
      waitedForDecode++;
    }
  }

  /** A decode instance may have room now: those waiting try again (at the current time). */
  public void wake() {
    if (!waiting.isEmpty() && !retryPending) {
      retryPending = true;
      host.schedule(host.nowUs(), RETRY);
    }
  }

  private void place() {
    while (!waiting.isEmpty()) {
      T r = waiting.peekFirst();
      int d = host.placeDecode(r);
      if (d < 0) {
        return; // first come, first served: nobody behind it goes first
      }
      waiting.pollFirst();
      start(r, host.prefillInstance(r), d, host.tokensToMove(r));
    }
  }

  private void start(T r, int p, int d, int tokens) {
    long now = host.nowUs();
    Disaggregation.Transfer t = config.transfer();
    long wholeBytes = (long) tokens * kv[p].kvBytesPerToken();
    Links.Flow<T> f;
    if (p == d) {
      f = new Links.Flow<>(r, 0, 1, new int[0], 0, now); // prefilled where it decodes: nothing moves
    } else if (t.bandwidthGBps() != null) {
      f = new Links.Flow<>(r, wholeBytes, t.bandwidthGBps() * 1e9,
          t.contention() ? new int[] {globalPort} : new int[0], t.baseLatencyUs(), now);
    } else {
      boolean sameNode = node[p] == node[d];
      double bw = sameNode ? Math.min(kv[p].nvlinkBytesPerS(), kv[d].nvlinkBytesPerS())
          : Math.min(kv[p].nicBytesPerS(), kv[d].nicBytesPerS());
      long latency = sameNode ? Math.max(kv[p].nvlinkLatencyUs(), kv[d].nvlinkLatencyUs())
          : Math.max(kv[p].nicLatencyUs(), kv[d].nicLatencyUs());
      // every GPU moves its own shard at once: the larger shard of the two layouts sets the time
      long laneBytes = (long) tokens * Math.max(kv[p].kvBytesPerTokenPerGpu(), kv[d].kvBytesPerTokenPerGpu());
      int port = sameNode ? 0 : 1;
      f = new Links.Flow<>(r, laneBytes, bw, new int[] {2 * p + port, 2 * d + port},
          t.baseLatencyUs() + latency, now);
    }
    transferredBytes += p == d ? 0 : wholeBytes;
    moving.put(r, f);
    if (p == d) {
      host.schedule(now, new Done(f));
      return;
    }
    links.start(f, now);
    reschedule();
  }

  private void reschedule() {
    generation++;
    long at = links.nextCompletionUs();
    if (at != Long.MAX_VALUE) {
      host.schedule(at, new Tick(generation));
    }
  }

  /** Whether {@code event} is the coordinator's. */
  public static boolean isPdEvent(Object event) {
    return event == RETRY || event instanceof Tick || event instanceof Done;
  }

  /** Whether {@code event} would do nothing (a superseded tick, the arrival of a cancelled transfer). */
  public boolean idle(Object event) {
    if (event instanceof Tick t) {
      return t.generation() != generation;
    }
    if (event instanceof Done d) {
      return moving.get(d.flow().request) != d.flow();
    }
    if (event == RETRY && waiting.isEmpty()) {
      retryPending = false;
      return true;
    }
    return false;
  }

  /** Handles one of the coordinator's events. */
  @SuppressWarnings("unchecked")
  public void onEvent(Object event) {
    if (event == RETRY) {
      retryPending = false;
      place();
    } else if (event instanceof Tick) {
      long now = host.nowUs();
      links.complete(now, f -> host.schedule(now + f.latencyUs, new Done(f)));
      reschedule();
    } else if (event instanceof Done d) {
      Links.Flow<T> f = (Links.Flow<T>) d.flow();
      moving.remove(f.request);
      transfer.add(host.nowUs() - f.startUs);
      transferred++;
      host.arrived(f.request);
    } else {
      throw new IllegalStateException("not a disaggregation event: " + event);
    }
  }

  /**
   * {@code r} ended (its client's deadline) while it waited for room or its KV moved: it leaves.
   *
   * @return whether it was waiting or moving
   */
  public boolean cancel(T r) {
    if (waiting.remove(r)) {
      return true;
    }
    Links.Flow<T> f = moving.remove(r);
    if (f == null) {
      return false;
    }
    if (links.cancel(f, host.nowUs())) {
      reschedule();
    }
    return true;
  }

  /** Whether {@code r} waits for a decode instance with room (not yet moving). */
  public boolean waitingForRoom(T r) {
    return !moving.containsKey(r);
  }

  /**
   * Records the phases of a completed disaggregated request's time to first token, and that time
   * ({@code ttftUs}, the client's), microseconds.
   */
  public void onCompleted(long prefillQueueUs, long prefillUs, long decodeWaitUs, long firstDecodeUs, long ttftUs) {
    ttft.add(ttftUs);
    prefillQueue.add(prefillQueueUs);
    prefill.add(prefillUs);
    decodeWait.add(decodeWaitUs);
    firstDecode.add(firstDecodeUs);
  }

  /** Every request waiting for room or moving. */
  public void forEachPending(Consumer<T> action) {
    waiting.forEach(action);
    moving.keySet().forEach(action);
  }

  /** The run's figures; {@code pools} as the engine measured them. */
  public DisaggregationReport report(List<DisaggregationReport.Pool> pools) {
    return new DisaggregationReport(config.decider().label(), config.transfer().describe(), disaggregated,
        keptWhole, transferred, waitedForDecode, waiting.size() + moving.size(), links.peakActive(),
        transferredBytes / 1e9, prefillQueue.summarize(), prefill.summarize(), decodeWait.summarize(),
        transfer.summarize(), firstDecode.summarize(), pools, ttft.summarize(), links.meanActiveAtStart());
  }
}
