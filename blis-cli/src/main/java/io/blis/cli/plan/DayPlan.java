package io.blis.cli.plan;

import io.blis.workload.StrictYaml;
import io.blis.workload.TextFiles;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;

/**
 * A day plan: the {@code blis run} flags of a simulated day shared by every point, and the points,
 * each a scaler configuration given as more flags. Read from YAML ({@link #load}):
 *
 * <pre>
 * run: --model llama-3.1-8b --workload-spec day.yaml --policy-config slo.yaml --max-replicas 32
 * attainment_target: 0.99            # optional: the best point is the cheapest that attains it
 * grid:                              # every combination of the values, first key slowest
 *   --autoscaler-option: [target=32, target=48]
 *   --min-replicas: [1, 2]
 * points:                            # more points after the grid's, each with a name
 *   - {name: fixed 5, flags: --autoscaler schedule --autoscaler-option replicas=0:5}
 * </pre>
 *
 * <p>{@code run} and a point's {@code flags} are a string split at white space or a list of
 * arguments. A grid value is one argument, or a list of them for a flag given several times. A
 * point's flag replaces the shared flag of that name; {@code --autoscaler-option KEY=VALUE}
 * replaces only the shared option of that key, so that a plan can vary one parameter of a
 * scaler, and a point's {@code --autoscaler} drops the shared scaler's options with it. Paths in
 * flags are read as on the command line (relative to the working directory).
 *
 * @param source the file, in messages
 * @param base the shared flags, as arguments
 * @param points the points in order: the grid's, then the listed ones
 * @param attainmentTarget the SLO attainment the best point must reach, or null for none
 */
public record DayPlan(String source, List<String> base, List<Point> points, Double attainmentTarget) {

  /** Most points in a plan (each is a whole simulated day). */
  public static final int MAX_POINTS = 1000;

  /** The flag naming the scaler: a point that gives it drops the shared {@link #KEYED_FLAG}s too. */
  static final String SCALER_FLAG = "--autoscaler";

  /** The repeatable flag whose {@code KEY=VALUE} arguments a point overrides key by key. */
  static final String KEYED_FLAG = "--autoscaler-option";

  /**
   * One point: its label and its own flags (name and argument pairs; a null argument for a switch).
   *
   * @param label how tables and charts name it
   * @param flags the flags it adds to or replaces in the shared ones
   */
  public record Point(String label, List<Flag> flags) {
    public Point {
      Objects.requireNonNull(label, "label");
      flags = List.copyOf(flags);
    }
  }

  /** A flag and its argument (null for a switch such as {@code --flow-control}). */
  public record Flag(String name, String value) {
    public Flag {
      Objects.requireNonNull(name, "name");
    }

    /** The flag as arguments. */
    List<String> args() {
      return value == null ? List.of(name) : List.of(name, value);
    }
  }

  public DayPlan {
    Objects.requireNonNull(source, "source");
    base = List.copyOf(base);
    points = List.copyOf(points);
    if (points.isEmpty()) {
      throw new IllegalArgumentException(source + ": a day plan needs points: a grid, a points list, or both");
    }
    if (points.size() > MAX_POINTS) {
      throw new IllegalArgumentException(source + ": " + points.size() + " points, more than " + MAX_POINTS);
    }
    if (attainmentTarget != null && !(attainmentTarget > 0 && attainmentTarget <= 1)) {
      throw new IllegalArgumentException(source + ": attainment_target must be in (0, 1], got " + attainmentTarget);
    }
  }

  /** The YAML binding. */
  record PlanFile(Object run, Double attainmentTarget, LinkedHashMap<String, List<Object>> grid,
      List<PointFile> points) {}

  /** A listed point. */
  record PointFile(String name, Object flags) {}

  /**
   * Reads a plan.
   *
   * @param takesValue whether a flag of {@code blis run} takes an argument (false for a switch)
   * @throws IllegalArgumentException one line naming the file and what is wrong
   */
  public static DayPlan load(Path file, Predicate<String> takesValue) {
    return parse(TextFiles.readConfig(file), file.toString(), takesValue);
  }

  /** Parses a plan's text; {@code source} names it in messages. */
  public static DayPlan parse(String text, String source, Predicate<String> takesValue) {
    PlanFile f = StrictYaml.parse(text, source, PlanFile.class);
    if (f.run() == null) {
      throw new IllegalArgumentException(source + ": run is missing: the blis run flags every point shares,"
          + " for example run: --model llama-3.1-8b --workload-spec day.yaml");
    }
    List<String> base = arguments(f.run(), source + ": run");
    flags(base, source + ": run", takesValue); // checks its shape
    List<Point> points = new ArrayList<>();
    if (f.grid() != null) {
      points.addAll(grid(f.grid(), source, takesValue));
    }
    if (f.points() != null) {
      Set<String> names = new LinkedHashSet<>();
      for (int i = 0; i < f.points().size(); i++) {
        PointFile p = f.points().get(i);
        String where = source + ": points[" + i + "]";
        if (p == null || p.name() == null || p.name().isBlank()) {
          throw new IllegalArgumentException(where + ": a listed point needs a name");
        }
        if (!names.add(p.name())) {
          throw new IllegalArgumentException(where + ": the name '" + p.name() + "' is given twice");
        }
        if (p.flags() == null) {
          throw new IllegalArgumentException(where + ": flags are missing");
        }
        points.add(new Point(p.name(), flags(arguments(p.flags(), where + ".flags"), where + ".flags", takesValue)));
      }
    }
    return new DayPlan(source, base, points, f.attainmentTarget());
  }

  /** The grid's points: every combination, the first key's values slowest. */
  private static List<Point> grid(Map<String, List<Object>> grid, String source, Predicate<String> takesValue) {
    List<String> keys = new ArrayList<>(grid.keySet());
    List<List<List<Flag>>> axes = new ArrayList<>();
    long combinations = 1;
    for (String key : keys) {
      String where = source + ": grid." + key;
      if (!key.startsWith("--")) {
        throw new IllegalArgumentException(where + ": a grid key is a blis run flag such as --min-replicas");
      }
      List<Object> values = grid.get(key);
      if (values == null || values.isEmpty()) {
        throw new IllegalArgumentException(where + ": needs a list of values");
      }
      if (!takesValue.test(key)) {
        throw new IllegalArgumentException(where + ": " + key + " takes no value; give it in run or a point's flags");
      }
      List<List<Flag>> axis = new ArrayList<>();
      for (int i = 0; i < values.size(); i++) {
        Object v = values.get(i);
        List<Flag> occurrences = new ArrayList<>();
        String at = where + "[" + i + "]";
        for (String arg : v instanceof List<?> l ? scalars(l, at) : List.of(scalar(v, at))) {
          occurrences.add(new Flag(key, arg));
        }
        axis.add(occurrences);
      }
      axes.add(axis);
      combinations *= axis.size();
      if (combinations > MAX_POINTS) {
        throw new IllegalArgumentException(source + ": grid has more than " + MAX_POINTS + " points");
      }
    }
    List<Point> out = new ArrayList<>();
    int[] at = new int[axes.size()];
    for (long n = 0; n < combinations; n++) {
      List<Flag> flags = new ArrayList<>();
      List<String> label = new ArrayList<>();
      for (int k = 0; k < axes.size(); k++) {
        List<Flag> chosen = axes.get(k).get(at[k]);
        flags.addAll(chosen);
        label.add(keys.get(k).substring(2) + " " + String.join(" ", chosen.stream().map(Flag::value).toList()));
      }
      out.add(new Point(String.join(", ", label), flags));
      for (int k = axes.size() - 1; k >= 0; k--) {
        if (++at[k] < axes.get(k).size()) {
          break;
        }
        at[k] = 0;
      }
    }
    return out;
  }

  /** A string split at white space, or a list of scalars, as arguments. */
  private static List<String> arguments(Object value, String where) {
    if (value instanceof String s) {
      return s.isBlank() ? List.of() : List.of(s.trim().split("\\s+"));
    }
    if (value instanceof List<?> l) {
      return scalars(l, where);
    }
    throw new IllegalArgumentException(where + ": expected flags as a string or a list of arguments");
  }

  private static List<String> scalars(List<?> values, String where) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < values.size(); i++) {
      out.add(scalar(values.get(i), where + "[" + i + "]"));
    }
    return out;
  }

  private static String scalar(Object v, String where) {
    if (v instanceof String || v instanceof Number || v instanceof Boolean) {
      return v.toString();
    }
    throw new IllegalArgumentException(where + ": expected a flag's argument (a string or a number), got "
        + (v == null ? "nothing" : v instanceof List ? "a list" : "a mapping"));
  }

  /**
   * Arguments as flags: {@code --name value}, {@code --name=value}, or {@code --name} alone for a
   * switch.
   */
  static List<Flag> flags(List<String> args, String where, Predicate<String> takesValue) {
    List<Flag> out = new ArrayList<>();
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      if (!a.startsWith("--")) {
        throw new IllegalArgumentException(where + ": expected a flag (--name) at '" + a + "'");
      }
      int eq = a.indexOf('=');
      if (eq > 0) {
        out.add(new Flag(a.substring(0, eq), a.substring(eq + 1)));
      } else if (takesValue.test(a)) {
        if (i + 1 >= args.size()) {
          throw new IllegalArgumentException(where + ": " + a + " needs a value");
        }
        out.add(new Flag(a, args.get(++i)));
      } else {
        out.add(new Flag(a, null));
      }
    }
    return out;
  }

  /**
   * The {@code blis run} arguments of a point: the shared flags it does not replace, then its own.
   *
   * @param takesValue as for {@link #load}
   */
  public List<String> args(Point p, Predicate<String> takesValue) {
    Set<String> replaced = new LinkedHashSet<>();
    Set<String> replacedKeys = new LinkedHashSet<>();
    for (Flag f : p.flags()) {
      if (f.name().equals(KEYED_FLAG) && f.value() != null) {
        replacedKeys.add(key(f.value()));
      } else {
        replaced.add(f.name());
      }
    }
    if (replaced.contains(SCALER_FLAG)) {
      replaced.add(KEYED_FLAG); // another scaler: the shared scaler's parameters are not its own
    }
    List<String> out = new ArrayList<>();
    for (Flag f : flags(base, source + ": run", takesValue)) {
      boolean keyedOut = f.name().equals(KEYED_FLAG) && f.value() != null && replacedKeys.contains(key(f.value()));
      if (!replaced.contains(f.name()) && !keyedOut) {
        out.addAll(f.args());
      }
    }
    p.flags().forEach(f -> out.addAll(f.args()));
    return out;
  }

  private static String key(String keyValue) {
    int eq = keyValue.indexOf('=');
    return (eq < 0 ? keyValue : keyValue.substring(0, eq)).trim().toLowerCase(Locale.ROOT);
  }
}
