package io.blis.engine;

import io.blis.api.BatchView;
import java.util.Arrays;

/**
 * A growable array of requests in engine order: the running list and the batch of a step. Also
 * the {@link BatchView} handed to plugins, so no view object is allocated per step.
 */
final class RequestList implements BatchView {

  private EngineRequest[] items = new EngineRequest[16];
  private int size;

  @Override
  public int size() {
    return size;
  }

  @Override
  public EngineRequest get(int index) {
    if (index < 0 || index >= size) {
      throw new IndexOutOfBoundsException("index " + index + " outside [0, " + size + ")");
    }
    return items[index];
  }

  void add(EngineRequest r) {
    if (size == items.length) {
      items = Arrays.copyOf(items, size * 2);
    }
    items[size++] = r;
  }

  EngineRequest removeAt(int index) {
    EngineRequest r = get(index);
    System.arraycopy(items, index + 1, items, index, size - index - 1);
    items[--size] = null;
    return r;
  }

  /** Removes {@code r} (by identity); returns whether it was present. */
  boolean remove(EngineRequest r) {
    for (int i = 0; i < size; i++) {
      if (items[i] == r) {
        removeAt(i);
        return true;
      }
    }
    return false;
  }

  /** Drops every request no longer running (finished, or handed off to a decode instance), keeping the order of the others. */
  void removeFinished() {
    int w = 0;
    for (int i = 0; i < size; i++) {
      if (items[i].state == EngineRequest.State.RUNNING) {
        items[w++] = items[i];
      }
    }
    Arrays.fill(items, w, size, null);
    size = w;
  }

  void clear() {
    Arrays.fill(items, 0, size, null);
    size = 0;
  }

  boolean isEmpty() {
    return size == 0;
  }
}
