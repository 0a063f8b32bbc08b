package io.blis.api;

/** Common shape of every provider: a unique name users select it by, and a short description. */
public interface NamedProvider {

  /** The name users select this implementation by (lower-case, dash-separated). */
  String name();

  /** One line saying what the implementation does. */
  default String description() {
    return "";
  }
}
