package io.blis.api;

/** Common shape of every provider: a unique name users select it by, and a short description. */
public interface NamedProvider {

  /**
   * {@return the name users select this implementation by (lower-case, dash-separated)} Unique
   * among the providers of one type.
   */
  String name();

  /** {@return one line saying what the implementation does} Empty by default. */
  default String description() {
    return "";
  }

  /**
   * Other names users may select this implementation by (another tool's name for the same thing);
   * none by default. {@link Providers#select} accepts them; listings show {@link #name()} only.
   *
   * @return the aliases, never null
   */
  default java.util.List<String> aliases() {
    return java.util.List.of();
  }
}
