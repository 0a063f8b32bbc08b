package io.blis.api;

/** Thrown when a plugin is selected by a name no provider has, or by a name two providers share. */
public final class UnknownProviderException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  public UnknownProviderException(String message) {
    super(message);
  }
}
