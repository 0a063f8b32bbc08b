package io.blis.api;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.TreeMap;

/**
 * Discovers providers with {@link ServiceLoader} and selects one by name. Built-in
 * implementations are registered exactly like third-party ones. A provider that fails to load is
 * skipped with a warning; two providers with one name make that name ambiguous and selecting it
 * is an error naming both classes.
 */
public final class Providers {

  /** Created on first use (a broken provider): System.getLogger costs start-up time. */
  private static final class Log {
    static final System.Logger LOG = System.getLogger(Providers.class.getName());
  }

  private Providers() {}

  /**
   * All providers of {@code type} visible to {@code loader}, sorted by name. Broken providers are
   * skipped with a warning.
   *
   * @param <P> the provider interface
   * @param type the provider interface, for example {@code RouterProvider.class}
   * @param loader the class loader {@link ServiceLoader} searches
   * @return a new list, providers sharing a name next to each other
   */
  public static <P extends NamedProvider> List<P> all(Class<P> type, ClassLoader loader) {
    Map<String, List<P>> byName = discover(type, loader);
    List<P> out = new ArrayList<>();
    byName.values().forEach(out::addAll);
    return out;
  }

  /**
   * All providers of {@code type} visible to the context class loader (or, without one, to this
   * class's loader), sorted by name.
   *
   * @param <P> the provider interface
   * @param type the provider interface, for example {@code RouterProvider.class}
   * @return a new list, providers sharing a name next to each other
   */
  public static <P extends NamedProvider> List<P> all(Class<P> type) {
    return all(type, defaultLoader());
  }

  /**
   * The names of the providers of {@code type} visible to the context class loader, sorted.
   * Aliases are not listed.
   *
   * @param <P> the provider interface
   * @param type the provider interface, for example {@code RouterProvider.class}
   * @return a new list of distinct names
   */
  public static <P extends NamedProvider> List<String> names(Class<P> type) {
    return new ArrayList<>(discover(type, defaultLoader()).keySet());
  }

  /**
   * The provider of {@code type} called {@code name}, searched with the context class loader (or,
   * without one, this class's loader). A name no provider has is looked up among the {@link
   * NamedProvider#aliases()}.
   *
   * @param <P> the provider interface
   * @param type the provider interface, for example {@code RouterProvider.class}
   * @param name the provider's name or one of its aliases
   * @return the one provider with that name
   * @throws NullPointerException if {@code name} is null
   * @throws UnknownProviderException if none has that name (the message lists the names that
   *     exist) or more than one has it (the message names their classes)
   */
  public static <P extends NamedProvider> P select(Class<P> type, String name) {
    return select(type, name, defaultLoader());
  }

  /**
   * As {@link #select(Class, String)} with an explicit class loader.
   *
   * @param <P> the provider interface
   * @param type the provider interface, for example {@code RouterProvider.class}
   * @param name the provider's name or one of its aliases
   * @param loader the class loader {@link ServiceLoader} searches
   * @return the one provider with that name
   * @throws NullPointerException if {@code name} is null
   * @throws UnknownProviderException if none has that name or more than one has it
   */
  public static <P extends NamedProvider> P select(Class<P> type, String name, ClassLoader loader) {
    Objects.requireNonNull(name, "name");
    Map<String, List<P>> byName = discover(type, loader);
    List<P> found = byName.get(name);
    if (found == null) {
      found = byAlias(byName, name);
    }
    String kind = kindOf(type);
    if (found == null) {
      throw new UnknownProviderException(
          "unknown " + kind + " '" + name + "'; available: " + String.join(", ", byName.keySet()));
    }
    if (found.size() > 1) {
      List<String> classes = new ArrayList<>();
      found.forEach(p -> classes.add(p.getClass().getName()));
      throw new UnknownProviderException(
          "ambiguous " + kind + " '" + name + "': provided by " + String.join(" and ", classes));
    }
    return found.get(0);
  }

  /**
   * The name of the provider of {@code type} that {@code name} is the name or an alias of; {@code
   * name} itself when no provider answers to it.
   *
   * @param <P> the provider interface
   * @param type the provider interface, for example {@code RouterProvider.class}
   * @param name a provider's name or alias, or any other string
   * @return the provider's name; {@code name} when it is already a name, matches no provider, or
   *     is an alias of more than one
   */
  public static <P extends NamedProvider> String canonicalName(Class<P> type, String name) {
    Map<String, List<P>> byName = discover(type, defaultLoader());
    List<P> found = byName.containsKey(name) ? null : byAlias(byName, name);
    return found == null || found.size() != 1 ? name : found.get(0).name();
  }

  /** The providers that list {@code alias} among their aliases, or null when none does. */
  private static <P extends NamedProvider> List<P> byAlias(Map<String, List<P>> byName, String alias) {
    List<P> out = new ArrayList<>(1);
    byName.values().forEach(ps -> ps.stream().filter(p -> p.aliases().contains(alias)).forEach(out::add));
    return out.isEmpty() ? null : out;
  }

  private static <P extends NamedProvider> Map<String, List<P>> discover(
      Class<P> type, ClassLoader loader) {
    Map<String, List<P>> byName = new TreeMap<>();
    Iterator<P> it = ServiceLoader.load(type, loader).iterator();
    while (true) {
      P provider;
      try {
        if (!it.hasNext()) {
          break;
        }
        provider = it.next();
      } catch (ServiceConfigurationError e) {
        Log.LOG.log(System.Logger.Level.WARNING, "skipping a broken " + kindOf(type) + ": " + e.getMessage());
        continue;
      }
      byName.computeIfAbsent(provider.name(), k -> new ArrayList<>(1)).add(provider);
    }
    return byName;
  }

  private static ClassLoader defaultLoader() {
    ClassLoader cl = Thread.currentThread().getContextClassLoader();
    return cl != null ? cl : Providers.class.getClassLoader();
  }

  private static String kindOf(Class<?> type) {
    if (type == LatencyModelProvider.class) {
      return "latency model";
    }
    if (type == SchedulerProvider.class) {
      return "scheduler";
    }
    if (type == RouterProvider.class) {
      return "router";
    }
    if (type == AdmissionPolicyProvider.class) {
      return "admission policy";
    }
    if (type == PriorityPolicyProvider.class) {
      return "priority policy";
    }
    return type.getSimpleName();
  }
}
