package io.blis.engine.disagg;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The KV transfers in flight and the links they share. Each transfer moves its bytes at its
 * link's bandwidth divided by the number of transfers on its busiest port (processor sharing,
 * recomputed whenever a transfer starts or ends), then pays its latency. Ports are each
 * instance's NVLink and NIC, or one port for a fixed bandwidth shared by all transfers.
 *
 * @param <T> the engine's request
 */
final class Links<T> {

  /** A transfer's bytes on their way. */
  static final class Flow<T> {
    final T request;
    final double bytesPerS;
    final int[] ports;
    final long latencyUs;
    /** When the transfer started (its decode blocks reserved), microseconds. */
    final long startUs;
    double remaining;
    double rate;

    Flow(T request, long bytes, double bytesPerS, int[] ports, long latencyUs, long startUs) {
      this.request = request;
      this.startUs = startUs;
      this.remaining = bytes;
      this.bytesPerS = bytesPerS;
      this.ports = ports;
      this.latencyUs = latencyUs;
    }
  }

  private final int[] portLoad;
  private final List<Flow<T>> active = new ArrayList<>();
  private long lastUs;
  private int peakActive;
  private long starts;
  private long activeAtStarts;

  Links(int ports) {
    this.portLoad = new int[ports];
  }

  int active() {
    return active.size();
  }

  int peakActive() {
    return peakActive;
  }

  /** Transfers moving when one starts, itself included, on average over the starts (0 without any). */
  double meanActiveAtStart() {
    return starts == 0 ? 0 : (double) activeAtStarts / starts;
  }

  /** Starts {@code f} at {@code nowUs}. */
  void start(Flow<T> f, long nowUs) {
    advance(nowUs);
    active.add(f);
    for (int p : f.ports) {
      portLoad[p]++;
    }
    peakActive = Math.max(peakActive, active.size());
    starts++;
    activeAtStarts += active.size();
    rerate();
  }

  /** Removes {@code f} if it is still moving bytes; returns whether it was. */
  boolean cancel(Flow<T> f, long nowUs) {
    advance(nowUs);
    if (!active.remove(f)) {
      return false;
    }
    release(f);
    rerate();
    return true;
  }

  /**
   * Moves every transfer's bytes on to {@code nowUs} and hands the ones done (within the last
   * microsecond's worth) to {@code done}.
   */
  void complete(long nowUs, Consumer<Flow<T>> done) {
    advance(nowUs);
    List<Flow<T>> finished = new ArrayList<>();
    for (Flow<T> f : active) {
      if (f.remaining <= f.rate * 1e-6) {
        finished.add(f);
      }
    }
    if (finished.isEmpty()) {
      return;
    }
    active.removeAll(finished);
    finished.forEach(this::release);
    rerate();
    finished.forEach(done);
  }

  /**
   * When the next transfer's bytes are through at the current rates; {@link Long#MAX_VALUE} if none
   * move.
   *
   * @throws IllegalArgumentException when a transfer's bytes would take longer than {@link
   *     io.blis.engine.Simulation#MAX_DELAY_US} (one hour) at its rate: a bandwidth no deployment
   *     has (computed in floating point, so that it is refused rather than overflowing the clock)
   */
  long nextCompletionUs() {
    long next = Long.MAX_VALUE;
    for (Flow<T> f : active) {
      double us = Math.ceil(Math.max(0, f.remaining) / f.rate * 1e6);
      if (!(us <= io.blis.engine.Simulation.MAX_DELAY_US)) { // NaN too: a rate of 0
        throw new IllegalArgumentException(String.format(java.util.Locale.ROOT, "prefill/decode KV transfer:"
            + " %.0f bytes at %.4g GB/s would take %.4g s, beyond the limit of 3600 s (one hour) for one transfer;"
            + " give a higher --pd-transfer-bandwidth (transfer_bandwidth_gb_s), or check the GPUs' link bandwidths",
            Math.max(0, f.remaining), f.rate / 1e9, us / 1e6));
      }
      next = Math.min(next, lastUs + Math.max((long) us, 0));
    }
    return next;
  }

  private void advance(long nowUs) {
    double seconds = (nowUs - lastUs) / 1e6;
    if (seconds > 0) {
      for (Flow<T> f : active) {
        f.remaining -= f.rate * seconds;
      }
    }
    lastUs = nowUs;
  }

  private void release(Flow<T> f) {
    for (int p : f.ports) {
      portLoad[p]--;
    }
  }

  private void rerate() {
    for (Flow<T> f : active) {
      int share = 1;
      for (int p : f.ports) {
        share = Math.max(share, portLoad[p]);
      }
      f.rate = f.bytesPerS / share;
    }
  }
}
