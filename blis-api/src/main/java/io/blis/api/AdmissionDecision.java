package io.blis.api;

import java.util.Objects;

/**
 * The outcome of one {@link AdmissionPolicy#admit} call.
 *
 * @param admitted whether the request enters the cluster
 * @param reason why it was rejected (lower-case, underscore-separated, for example {@code
 *     token_bucket_empty}); empty when admitted
 */
public record AdmissionDecision(boolean admitted, String reason) {

  /** The request is admitted. */
  public static final AdmissionDecision ADMIT = new AdmissionDecision(true, "");

  public AdmissionDecision {
    Objects.requireNonNull(reason, "reason");
    if (admitted != reason.isEmpty()) {
      throw new IllegalArgumentException(admitted
          ? "an admitted request has no rejection reason, got '" + reason + "'"
          : "a rejection needs a non-empty reason");
    }
  }

  /** A rejection with {@code reason}. */
  public static AdmissionDecision reject(String reason) {
    return new AdmissionDecision(false, reason);
  }
}
