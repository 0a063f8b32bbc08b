package io.blis.engine.flow;

import io.blis.engine.policy.Admissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.TreeMap;

/**
 * The gateway's queue: one band per priority (lower is more urgent, as vLLM's priorities), within
 * a band one queue per tenant, entries in arrival order (or deadline order under {@link
 * FlowControl.DispatchOrder#SLO_DEADLINE}). It decides who joins, who is shed and who leaves
 * next; when (saturation, ticks, deadlines) is the caller's business. Removal of an entry that
 * expires is lazy: it is marked and skipped when it reaches a queue's head.
 *
 * @param <T> what is queued (the engine's request)
 */
public final class GatewayQueue<T> {

  /** A queued item with what the ordering needs. */
  public static final class Entry<T> {
    private final T item;
    private final int band;
    private final String tenant;
    private final String sloClass;
    private final long seq;
    private final long key;
    private final long enqueuedUs;
    private boolean queued = true;

    private Entry(T item, int band, String tenant, String sloClass, long seq, long key, long enqueuedUs) {
      this.item = item;
      this.band = band;
      this.tenant = tenant;
      this.sloClass = sloClass;
      this.seq = seq;
      this.key = key;
      this.enqueuedUs = enqueuedUs;
    }

    /** The queued item. */
    public T item() {
      return item;
    }

    /** Its SLO class. */
    public String sloClass() {
      return sloClass;
    }

    /** When it joined the queue, microseconds. */
    public long enqueuedUs() {
      return enqueuedUs;
    }

    /** Whether it is still in the queue. */
    public boolean queued() {
      return queued;
    }
  }

  /** What became of an offer: queued or not, and the entry shed to make room, if any. */
  public record Offer<T>(Entry<T> entry, Entry<T> shed) {
    /** Whether the item joined the queue. */
    public boolean accepted() {
      return entry != null;
    }
  }

  private static final Comparator<Entry<?>> ORDER =
      Comparator.<Entry<?>>comparingLong(e -> e.key).thenComparingLong(e -> e.seq);

  private final class Band {
    final TreeMap<String, PriorityQueue<Entry<T>>> flows = new TreeMap<>();
    int size;
    String lastTenant;

    PriorityQueue<Entry<T>> flow(String tenant) {
      return flows.computeIfAbsent(tenant, t -> new PriorityQueue<>(ORDER));
    }
  }

  private final FlowControl config;
  private final TreeMap<Integer, Band> bands = new TreeMap<>();
  private int size;
  private int maxSize;
  private long nextSeq;

  public GatewayQueue(FlowControl config) {
    this.config = config;
  }

  /** Requests queued now. */
  public int size() {
    return size;
  }

  /** The most requests queued at once so far. */
  public int maxSize() {
    return maxSize;
  }

  /**
   * Offers {@code item} of band {@code band} (priority, lower is more urgent), tenant and SLO
   * class, at {@code nowUs}.
   */
  public Offer<T> offer(T item, int band, String tenant, String sloClass, long nowUs) {
    Band b = bands.computeIfAbsent(band, k -> new Band());
    if (config.perBandCapacity() > 0 && b.size >= config.perBandCapacity()) {
      return new Offer<>(null, null);
    }
    Entry<T> shed = null;
    if (config.maxQueueDepth() > 0 && size >= config.maxQueueDepth()) {
      if (!config.queueShedding() || (shed = victim(band)) == null) {
        return new Offer<>(null, null);
      }
      remove(shed);
    }
    long seq = nextSeq++;
    long key = config.dispatchOrder() == FlowControl.DispatchOrder.SLO_DEADLINE
        ? config.deadlineUs(sloClass, nowUs) : seq;
    Entry<T> e = new Entry<>(item, band, tenant, sloClass, seq, key, nowUs);
    b.flow(tenant).add(e);
    b.size++;
    size++;
    maxSize = Math.max(maxSize, size);
    return new Offer<>(e, shed);
  }

  /** The newest entry of the least urgent sheddable band less urgent than {@code band}, or null. */
  private Entry<T> victim(int band) {
    for (Map.Entry<Integer, Band> be : bands.descendingMap().entrySet()) {
      if (be.getKey() <= band) {
        return null;
      }
      Entry<T> newest = null;
      for (PriorityQueue<Entry<T>> q : be.getValue().flows.values()) {
        for (Entry<T> e : q) {
          // sheddable as the admission policies say: a class of negative GAIE priority
          if (e.queued && Admissions.gaiePriority(e.sloClass) < 0 && (newest == null || e.seq > newest.seq)) {
            newest = e;
          }
        }
      }
      if (newest != null) {
        return newest;
      }
    }
    return null;
  }

  /** Takes {@code e} out of the queue (an expiry or a shed); false if it had left already. */
  public boolean remove(Entry<T> e) {
    if (!e.queued) {
      return false;
    }
    e.queued = false;
    bands.get(e.band).size--;
    size--;
    return true;
  }

  /** The next entry to dispatch (removed from the queue), or null when the queue is empty. */
  public Entry<T> poll() {
    if (size == 0) {
      return null;
    }
    Entry<T> next = config.dispatchOrder() == FlowControl.DispatchOrder.FIFO ? earliest() : byBand();
    remove(next);
    return next;
  }

  private Entry<T> earliest() {
    Entry<T> best = null;
    for (Band b : bands.values()) {
      for (PriorityQueue<Entry<T>> q : b.flows.values()) {
        Entry<T> h = head(q);
        if (h != null && (best == null || h.seq < best.seq)) {
          best = h;
        }
      }
    }
    return best;
  }

  private Entry<T> byBand() {
    for (Band b : bands.values()) {
      if (b.size == 0) {
        continue;
      }
      if (config.fairness() == FlowControl.Fairness.ROUND_ROBIN) {
        List<String> tenants = new ArrayList<>(b.flows.keySet());
        int start = b.lastTenant == null ? 0 : tenants.indexOf(b.lastTenant) + 1;
        for (int i = 0; i < tenants.size(); i++) {
          String t = tenants.get((start + i) % tenants.size());
          Entry<T> h = head(b.flows.get(t));
          if (h != null) {
            b.lastTenant = t;
            return h;
          }
        }
      } else {
        Entry<T> best = null;
        for (PriorityQueue<Entry<T>> q : b.flows.values()) {
          Entry<T> h = head(q);
          if (h != null && (best == null || ORDER.compare(h, best) < 0)) {
            best = h;
          }
        }
        if (best != null) {
          return best;
        }
      }
    }
    throw new IllegalStateException("gateway queue counts " + size + " requests but holds none");
  }

  /** The first entry still queued in {@code q}, dropping those that left. */
  private Entry<T> head(PriorityQueue<Entry<T>> q) {
    Entry<T> h;
    while ((h = q.peek()) != null && !h.queued) {
      q.poll();
    }
    return h;
  }

  /** Every entry still queued, in no particular order. */
  public List<Entry<T>> queued() {
    List<Entry<T>> out = new ArrayList<>(size);
    for (Band b : bands.values()) {
      for (PriorityQueue<Entry<T>> q : b.flows.values()) {
        for (Entry<T> e : q) {
          if (e.queued) {
            out.add(e);
          }
        }
      }
    }
    return out;
  }
}
