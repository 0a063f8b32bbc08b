package io.blis.api;

/** Thrown when a plugin is selected by a name no provider has, or by a name two providers share. */
public final class UnknownProviderException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  /**
   * An exception with {@code message}.
   *
   * @param message what was selected and, for an unknown name, the names that exist
   */
  public UnknownProviderException(String message) {
    super(message);
  }
}
