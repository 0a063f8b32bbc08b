package io.blis.kvcache;

/**
 * A doubly linked list over the ids {@code 0..capacity-1}, stored in two int arrays (no node
 * objects). Each id is in the list at most once; the head is the oldest appended id.
 */
final class IntrusiveList {

  static final int NONE = -1;

  private final int[] prev;
  private final int[] next;
  private int head = NONE;
  private int tail = NONE;
  private int size;

  IntrusiveList(int capacity) {
    prev = new int[capacity];
    next = new int[capacity];
  }

  int head() {
    return head;
  }

  int next(int id) {
    return next[id];
  }

  int size() {
    return size;
  }

  void append(int id) {
    prev[id] = tail;
    next[id] = NONE;
    if (tail == NONE) {
      head = id;
    } else {
      next[tail] = id;
    }
    tail = id;
    size++;
  }

  void prepend(int id) {
    next[id] = head;
    prev[id] = NONE;
    if (head == NONE) {
      tail = id;
    } else {
      prev[head] = id;
    }
    head = id;
    size++;
  }

  void unlink(int id) {
    int p = prev[id];
    int n = next[id];
    if (p == NONE) {
      head = n;
    } else {
      next[p] = n;
    }
    if (n == NONE) {
      tail = p;
    } else {
      prev[n] = p;
    }
    prev[id] = NONE;
    next[id] = NONE;
    size--;
  }
}
