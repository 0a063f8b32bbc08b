package io.blis.latency.fit;

import java.util.List;

/**
 * The journey of one request as vLLM's request tracing recorded it: the API-layer events ({@code
 * ARRIVED}, {@code HANDOFF_TO_CORE}, {@code FIRST_RESPONSE}, {@code DEPARTED}) and the core-layer
 * events ({@code QUEUED}, {@code SCHEDULED}, {@code FIRST_TOKEN}, {@code PREEMPTED}, {@code
 * FINISHED}), each in time order.
 *
 * @param requestId the request
 * @param instance the server its core events came from (empty when unknown)
 * @param api API-layer events
 * @param core core-layer events
 */
public record TracedJourney(String requestId, String instance, List<Event> api, List<Event> core) {

  public TracedJourney {
    api = List.copyOf(api);
    core = List.copyOf(core);
  }

  /**
   * One journey event.
   *
   * @param name event name
   * @param timeNs when it happened, nanoseconds
   * @param step scheduler step ({@code scheduler.step}), -1 when absent
   * @param prefillDone prompt tokens computed ({@code prefill_done_tokens}), -1 when absent
   * @param prefillTotal prompt length ({@code prefill_total_tokens}), -1 when absent
   * @param decodeDone output tokens generated ({@code decode_done_tokens}), -1 when absent
   * @param preemptions {@code num_preemptions}, -1 when absent
   * @param detail {@code schedule.kind} or {@code finish.status}, empty when absent
   */
  public record Event(String name, long timeNs, long step, int prefillDone, int prefillTotal,
      int decodeDone, int preemptions, String detail) {}
}
