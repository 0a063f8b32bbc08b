package io.blis.workload.synthetic;

import io.blis.workload.RequestSpec;
import io.blis.workload.TextFiles;
import java.util.List;
import java.util.Objects;

/**
 * One client of a synthetic workload: its arrival process (at its own rate), prompt and output
 * lengths, shared prefix, classification, timeout, sessions and activity windows.
 *
 * <p>A request's prompt is {@code prefixLength} tokens shared by every client of {@code
 * prefixGroup}, followed by {@code input.sample()} tokens of its own content; the output is {@code
 * output.sample()} tokens.
 *
 * @param id client name, unique within a workload
 * @param tenant tenant name, empty when unused
 * @param sloClass SLO class (critical, standard, batch, sheddable, background)
 * @param arrival arrival process of this client at its own rate
 * @param input tokens of the prompt after the shared prefix
 * @param output output tokens
 * @param prefixGroup shared-prefix group, empty for none
 * @param prefixLength shared-prefix tokens at the start of every prompt (0 without a group)
 * @param timeoutUs client timeout per request, microseconds; 0 means none
 * @param session multi-turn sessions, {@link SessionSpec#NONE} for single requests
 * @param windows activity windows sorted by start, not overlapping; empty means always active
 * @param curve the rate hour by hour over the day ({@link RateCurve#NONE}: constant)
 * @param model the model every request names, empty for none
 * @param adapter the LoRA adapter every request names, empty for none (the base model, unless
 *     {@code adapters} draws one)
 * @param adapters the popularity of the LoRA adapters the requests name, one drawn for each
 *     request (a session's later rounds name its first round's adapter); {@link
 *     AdapterPopularity#NONE} when the client names none or only {@code adapter}
 */
public record ClientSpec(
    String id,
    String tenant,
    String sloClass,
    ArrivalProcess arrival,
    LengthDistribution input,
    LengthDistribution output,
    String prefixGroup,
    int prefixLength,
    long timeoutUs,
    SessionSpec session,
    List<ActiveWindow> windows,
    RateCurve curve,
    String model,
    String adapter,
    AdapterPopularity adapters) {

  /** A client whose requests name no model. */
  public ClientSpec(String id, String tenant, String sloClass, ArrivalProcess arrival,
      LengthDistribution input, LengthDistribution output, String prefixGroup, int prefixLength,
      long timeoutUs, SessionSpec session, List<ActiveWindow> windows, RateCurve curve) {
    this(id, tenant, sloClass, arrival, input, output, prefixGroup, prefixLength, timeoutUs, session,
        windows, curve, "");
  }

  /** A client whose requests name no LoRA adapter. */
  public ClientSpec(String id, String tenant, String sloClass, ArrivalProcess arrival,
      LengthDistribution input, LengthDistribution output, String prefixGroup, int prefixLength,
      long timeoutUs, SessionSpec session, List<ActiveWindow> windows, RateCurve curve, String model) {
    this(id, tenant, sloClass, arrival, input, output, prefixGroup, prefixLength, timeoutUs, session,
        windows, curve, model, "", AdapterPopularity.NONE);
  }

  /** SLO classes the engine knows. */
  public static final List<String> SLO_CLASSES =
      List.of("critical", "standard", "batch", "sheddable", "background");

  public ClientSpec {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(tenant, "tenant");
    Objects.requireNonNull(arrival, "arrival");
    Objects.requireNonNull(input, "input");
    Objects.requireNonNull(output, "output");
    Objects.requireNonNull(prefixGroup, "prefixGroup");
    Objects.requireNonNull(session, "session");
    Objects.requireNonNull(curve, "curve");
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(adapter, "adapter");
    Objects.requireNonNull(adapters, "adapters");
    if (!SLO_CLASSES.contains(sloClass)) {
      throw new IllegalArgumentException(
          "client " + id + ": unknown SLO class '" + TextFiles.quote(sloClass) + "', expected one of " + SLO_CLASSES);
    }
    if (prefixLength < 0 || prefixLength >= RequestSpec.MAX_TOKENS) {
      throw new IllegalArgumentException("client " + id + ": prefix length must be in [0, "
          + (RequestSpec.MAX_TOKENS - 1) + "] tokens (a prompt has at most " + RequestSpec.MAX_TOKENS
          + "), got " + prefixLength);
    }
    if (prefixLength > 0 && prefixGroup.isEmpty()) {
      throw new IllegalArgumentException(
          "client " + id + ": a prefix length needs a prefix group name");
    }
    if (timeoutUs < 0 || timeoutUs > RequestSpec.MAX_TIME_US) {
      throw new IllegalArgumentException("client " + id + ": timeout must be in [0, "
          + RequestSpec.MAX_TIME_US + "] us, got " + timeoutUs);
    }
    if (!adapter.isEmpty() && !adapters.isNone()) {
      throw new IllegalArgumentException("client " + id + ": adapter and adapters exclude each other"
          + " (adapter names one adapter for every request, adapters draws one for each)");
    }
    for (String name : List.of(id, tenant, prefixGroup, model, adapter)) {
      if (name.contains(",") || name.contains("\"") || name.contains("\n") || name.contains("\r")) {
        throw new IllegalArgumentException("client " + id + ": name '" + name
            + "' must not contain commas, quotes or line breaks (traces store it unquoted)");
      }
    }
    windows = List.copyOf(windows);
    for (int i = 1; i < windows.size(); i++) {
      if (windows.get(i).startUs() < windows.get(i - 1).endUs()) {
        throw new IllegalArgumentException(
            "client " + id + ": lifecycle windows must be sorted and must not overlap");
      }
    }
  }

  /** A client whose rate is constant in time. */
  public ClientSpec(String id, String tenant, String sloClass, ArrivalProcess arrival,
      LengthDistribution input, LengthDistribution output, String prefixGroup, int prefixLength,
      long timeoutUs, SessionSpec session, List<ActiveWindow> windows) {
    this(id, tenant, sloClass, arrival, input, output, prefixGroup, prefixLength, timeoutUs, session,
        windows, RateCurve.NONE);
  }

  /** A client with standard SLO class, no tenant, prefix, timeout, sessions or windows. */
  public static ClientSpec simple(
      String id, ArrivalProcess arrival, LengthDistribution input, LengthDistribution output) {
    return new ClientSpec(
        id, "", "standard", arrival, input, output, "", 0, 0, SessionSpec.NONE, List.of());
  }
}
