package io.blis.engine;

import io.blis.api.Scheduler;
import java.util.Arrays;

/**
 * The waiting queue of an instance: a ring buffer with O(1) insertion at both ends (arrivals at
 * the back, preempted requests at the front) and an allocation-free stable insertion sort for
 * schedulers that order the queue.
 */
final class WaitingQueue {

  private EngineRequest[] ring = new EngineRequest[16];
  private int head;
  private int size;

  int size() {
    return size;
  }

  boolean isEmpty() {
    return size == 0;
  }

  EngineRequest get(int i) {
    return ring[(head + i) & (ring.length - 1)];
  }

  private void set(int i, EngineRequest r) {
    ring[(head + i) & (ring.length - 1)] = r;
  }

  void addLast(EngineRequest r) {
    grow();
    set(size++, r);
  }

  void addFirst(EngineRequest r) {
    grow();
    head = (head - 1) & (ring.length - 1);
    ring[head] = r;
    size++;
  }

  /** Inserts {@code r} at position {@code index} (0 = the head), shifting the rest back. */
  void insert(int index, EngineRequest r) {
    grow();
    for (int j = size; j > index; j--) {
      set(j, get(j - 1));
    }
    set(index, r);
    size++;
  }

  EngineRequest peekFirst() {
    return size == 0 ? null : ring[head];
  }

  EngineRequest pollFirst() {
    EngineRequest r = ring[head];
    ring[head] = null;
    head = (head + 1) & (ring.length - 1);
    size--;
    return r;
  }

  /** Removes {@code r} (by identity); returns whether it was present. */
  boolean remove(EngineRequest r) {
    for (int i = 0; i < size; i++) {
      if (get(i) == r) {
        for (int j = i; j < size - 1; j++) {
          set(j, get(j + 1));
        }
        set(size - 1, null);
        size--;
        return true;
      }
    }
    return false;
  }

  /** Stable insertion sort by the scheduler's order (cheap when the queue is nearly sorted). */
  void sort(Scheduler scheduler) {
    for (int i = 1; i < size; i++) {
      EngineRequest x = get(i);
      int j = i - 1;
      while (j >= 0 && scheduler.compareWaiting(get(j), x) > 0) {
        set(j + 1, get(j));
        j--;
      }
      set(j + 1, x);
    }
  }

  private void grow() {
    if (size < ring.length) {
      return;
    }
    EngineRequest[] bigger = new EngineRequest[ring.length * 2];
    for (int i = 0; i < size; i++) {
      bigger[i] = get(i);
    }
    Arrays.fill(ring, null);
    ring = bigger;
    head = 0;
  }
}
