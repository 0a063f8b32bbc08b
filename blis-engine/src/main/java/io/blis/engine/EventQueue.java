package io.blis.engine;

import java.util.Arrays;

/**
 * A binary min-heap of engine events. Events at the same microsecond fire in a fixed order:
 * cluster events (arrival, admission decision, routing decision, then the control plane's) before instance events; instance events by instance index, then by type
 * (queue entry, end of a CPU-tier copy, step boundary, client timeout); then in the order they were
 * scheduled. Parallel primitive arrays; no allocation per event once the arrays are large enough.
 */
final class EventQueue {

  /** A request arrives from the client (cluster). */
  static final int ARRIVAL = 0;
  /** The admission policy decides on a request (cluster). */
  static final int ADMIT = 1;
  /** The router picks a request's instance (cluster). */
  static final int ROUTE = 2;
  /** A request joins the waiting queue (after the latency model's queueing time). */
  static final int QUEUED = 3;
  /** A request's prefix finished loading from the CPU KV tier. */
  static final int LOADED = 4;
  /** A step boundary: the step in flight ends and the next batch is formed. */
  static final int STEP = 5;
  /** A client deadline passes (pushed when the request is routed). */
  static final int TIMEOUT = 6;
  /**
   * The control plane (cluster): the gateway's dispatch tick, a queued request's time-to-live or
   * client deadline; an autoscaling tick, a node or a replica becoming ready.
   */
  static final int CONTROL = 7;

  private static final int FIRST_INSTANCE_TYPE = QUEUED;
  private static final int SEQ_BITS = 40;
  private static final int TYPE_BITS = 3;
  private static final int INSTANCE_BITS = 19;
  /** Most instances whose events can be ordered by index (2^19). */
  static final int MAX_INSTANCES = 1 << INSTANCE_BITS;

  private long[] timeUs = new long[64];
  private long[] order = new long[64];
  private int[] type = new int[64];
  private Object[] payload = new Object[64];
  private int size;
  private long nextSeq;

  private int poppedType;
  private Object poppedPayload;

  boolean isEmpty() {
    return size == 0;
  }

  int size() {
    return size;
  }

  /** Time of the earliest event. */
  long peekTimeUs() {
    return timeUs[0];
  }

  /** Pushes a cluster event (instance index 0 in the ordering key). */
  void push(long atUs, int eventType, Object data) {
    push(atUs, eventType, 0, data);
  }

  /** Pushes an event of instance {@code instance} (or a cluster event, whose index is ignored). */
  void push(long atUs, int eventType, int instance, Object data) {
    if (size == timeUs.length) {
      int n = size * 2;
      timeUs = Arrays.copyOf(timeUs, n);
      order = Arrays.copyOf(order, n);
      type = Arrays.copyOf(type, n);
      payload = Arrays.copyOf(payload, n);
    }
    long key = orderKey(eventType, instance, nextSeq++);
    int i = size++;
    while (i > 0) {
      int parent = (i - 1) >>> 1;
      if (!less(atUs, key, timeUs[parent], order[parent])) {
        break;
      }
      move(parent, i);
      i = parent;
    }
    timeUs[i] = atUs;
    order[i] = key;
    type[i] = eventType;
    payload[i] = data;
  }

  /** Removes the earliest event; read it with {@link #poppedType()} and {@link #poppedPayload()}. */
  long pop() {
    long t = timeUs[0];
    poppedType = type[0];
    poppedPayload = payload[0];
    int last = --size;
    long lt = timeUs[last];
    long lo = order[last];
    int ltype = type[last];
    Object lp = payload[last];
    payload[last] = null;
    int i = 0;
    while (true) {
      int c = 2 * i + 1;
      if (c >= size) {
        break;
      }
      if (c + 1 < size && less(timeUs[c + 1], order[c + 1], timeUs[c], order[c])) {
        c++;
      }
      if (!less(timeUs[c], order[c], lt, lo)) {
        break;
      }
      move(c, i);
      i = c;
    }
    if (size > 0) {
      timeUs[i] = lt;
      order[i] = lo;
      type[i] = ltype;
      payload[i] = lp;
    }
    return t;
  }

  /** Calls {@code action} with the payload of every queued event of {@code eventType}. */
  void forEachPayload(int eventType, java.util.function.Consumer<Object> action) {
    for (int i = 0; i < size; i++) {
      if (type[i] == eventType) {
        action.accept(payload[i]);
      }
    }
  }

  int poppedType() {
    return poppedType;
  }

  Object poppedPayload() {
    return poppedPayload;
  }

  /**
   * (instance events flag, instance index, type, sequence) packed into one non-negative long,
   * compared as a number.
   */
  private static long orderKey(int eventType, int instance, long seq) {
    long cls = eventType >= FIRST_INSTANCE_TYPE && eventType != CONTROL ? 1L : 0L;
    long inst = cls == 1 ? instance : 0;
    return (cls << (SEQ_BITS + TYPE_BITS + INSTANCE_BITS))
        | (inst << (SEQ_BITS + TYPE_BITS))
        | ((long) eventType << SEQ_BITS)
        | seq;
  }

  private static boolean less(long t1, long o1, long t2, long o2) {
    return t1 < t2 || (t1 == t2 && o1 < o2);
  }

  private void move(int from, int to) {
    timeUs[to] = timeUs[from];
    order[to] = order[from];
    type[to] = type[from];
    payload[to] = payload[from];
  }
}
