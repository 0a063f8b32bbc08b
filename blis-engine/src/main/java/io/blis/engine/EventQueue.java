package io.blis.engine;

import java.util.Arrays;

/**
 * A binary min-heap of engine events keyed by (time, type priority, sequence number), so events
 * at the same microsecond fire in a fixed type order and then in the order they were scheduled.
 * Parallel primitive arrays; no allocation per event once the arrays are large enough.
 */
final class EventQueue {

  /** A request arrives from the client. */
  static final int ARRIVAL = 0;
  /** A request joins the waiting queue (after the latency model's queueing time). */
  static final int QUEUED = 1;
  /** A request's prefix finished loading from the CPU KV tier. */
  static final int LOADED = 2;
  /** A step boundary: the step in flight ends and the next batch is formed. */
  static final int STEP = 3;
  /** A client deadline passes. */
  static final int TIMEOUT = 4;

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

  void push(long atUs, int eventType, Object data) {
    if (size == timeUs.length) {
      int n = size * 2;
      timeUs = Arrays.copyOf(timeUs, n);
      order = Arrays.copyOf(order, n);
      type = Arrays.copyOf(type, n);
      payload = Arrays.copyOf(payload, n);
    }
    long key = ((long) eventType << 56) | nextSeq++;
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
