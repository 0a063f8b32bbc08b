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

  /**
   * Checks that exactly a rejection carries a reason.
   *
   * @param admitted whether the request enters the cluster
   * @param reason the rejection reason; empty when admitted
   * @throws NullPointerException if {@code reason} is null
   * @throws IllegalArgumentException if an admission has a reason or a rejection has none
   */
  public AdmissionDecision {
    Objects.requireNonNull(reason, "reason");
    if (admitted != reason.isEmpty()) {
      throw new IllegalArgumentException(admitted
          ? "an admitted request has no rejection reason, got '" + reason + "'"
          : "a rejection needs a non-empty reason");
    }
  }

  /**
   * A rejection with {@code reason}.
   *
   * @param reason why the request is rejected (lower-case, underscore-separated); not empty
   * @return a decision that does not admit the request
   * @throws IllegalArgumentException if {@code reason} is empty
   */
  public static AdmissionDecision reject(String reason) {
    return new AdmissionDecision(false, reason);
  }
}
