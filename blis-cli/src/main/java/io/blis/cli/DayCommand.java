package io.blis.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.cli.plan.DayOutcome;
import io.blis.cli.plan.DayPlan;
import io.blis.cli.plan.DayPlanTable;
import io.blis.engine.result.OutputFiles;
import io.blis.engine.result.SimulationResult;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code blis day}: the planning question for a day of traffic. Every point of a plan file ({@link
 * DayPlan}) is a {@code blis run} with an autoscaler; each is simulated whole and answered with
 * its GPU-hours, cost and SLO attainment; the table, the frontier of cost against attainment and
 * the replicas over the day go to a directory.
 */
@Command(
    name = "day",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {"Simulate a day (or any span) of traffic once per scaler configuration of a plan file: GPU-hours,"
        + " cost and SLO attainment of each, the frontier of cost against attainment, the replicas over the day;"
        + " writes DIR/day.csv, DIR/summary.json, DIR/report.html and DIR/results/point-N.json"
        + " (format: docs/capacity.md, Planning a day)."})
final class DayCommand implements Callable<Integer> {

  /** Flags of {@code blis run} a point may not give: they write files or change what a run prints. */
  static final List<String> REFUSED = List.of("--trace-out", "--trace-output", "--results-path", "--metrics-path", "--post-hoc-detector", "--detectors", "--saturation-report", "--otel-out", "--per-request",
      "--ensemble", "--output-format", "--help", "--version");

  @Spec CommandSpec spec;

  @Option(names = "--plan", required = true, paramLabel = "FILE",
      description = "Plan file (YAML): the blis run flags every point shares, and the points (a grid of flag values,"
          + " a list, or both).")
  Path plan;

  @Option(names = "--out", required = true, paramLabel = "DIR", description = "Output directory.")
  Path out;

  @Option(names = "--threads", paramLabel = "N",
      description = "Points simulated at once (default: the available processors, here ${DEFAULT-VALUE}; a simulated"
          + " day at 50 req/s holds about 1.6 GB).")
  int threads = Runtime.getRuntime().availableProcessors();

  @Option(names = "--quiet", description = "Print no line per finished point.")
  boolean quiet;

  @Override
  public Integer call() {
    CommandLine cl = spec.commandLine();
    if (threads < 1 || threads > 1024) {
      throw new ParameterException(cl, "--threads must be in [1, 1024], got " + threads);
    }
    if (out.toString().isBlank()) {
      throw new ParameterException(cl, "--out needs a directory name, got an empty one");
    }
    for (Path p = out; p != null; p = p.getParent()) { // --out, or a directory on the way to it, is a file
      if (Files.exists(p) && !Files.isDirectory(p)) {
        throw new ParameterException(cl, "--out: '" + p + "' is a file, expected a directory (day writes "
            + DayPlanTable.CSV + ", " + DayPlanTable.REPORT + " and results/ in --out)");
      }
    }
    Predicate<String> takesValue = takesValue();
    DayPlan p = DayPlan.load(Cli.requireFile("--plan", plan), takesValue);
    List<List<String>> args = new ArrayList<>();
    List<Boolean> examplePrice = new ArrayList<>();
    for (int i = 0; i < p.points().size(); i++) {
      List<String> a = p.args(p.points().get(i), takesValue);
      RunCommand run = parse(p, i, a);
      args.add(a);
      examplePrice.add(run.examplePrice());
    }
    Path results = out.resolve("results");
    try {
      Files.createDirectories(results);
    } catch (IOException e) {
      throw new IllegalArgumentException("--out: cannot create the directory '" + results + "': "
          + io.blis.workload.TextFiles.reason(e), e);
    }
    PrintWriter w = cl.getOut();
    int n = p.points().size();
    int pool = Math.min(threads, n);
    w.printf(Locale.ROOT, "%d points, %d at a time%n", n, pool);
    w.flush();
    long start = System.nanoTime();
    DayOutcome[] outcomes = new DayOutcome[n];
    AtomicInteger done = new AtomicInteger();
    AtomicInteger reused = new AtomicInteger();
    ExecutorService exec = Executors.newFixedThreadPool(pool, r -> {
      Thread t = new Thread(r, "blis-day");
      t.setDaemon(true);
      return t;
    });
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int index = i;
        futures.add(exec.submit(() -> {
          long t0 = System.nanoTime();
          String label = p.points().get(index).label();
          String key = key(args.get(index));
          Path result = results.resolve("point-" + index + ".json");
          Path outcome = results.resolve("point-" + index + OUTCOME);
          DayOutcome o = earlier(outcome, result, key, index, label);
          boolean again = o != null;
          if (o == null) {
            SimulationResult r = parse(p, index, args.get(index)).simulateOnly();
            o = DayOutcome.of(index, label, args.get(index), examplePrice.get(index), r);
            write(result, r.toJson());
            ObjectNode record = JsonNodeFactory.instance.objectNode();
            record.put("key", key);
            record.set("outcome", o.toJson());
            write(outcome, io.blis.cli.sweep.Sweep.pretty(record));
          } else {
            reused.incrementAndGet();
          }
          outcomes[index] = o;
          if (!quiet) {
            synchronized (w) {
              w.printf(Locale.ROOT, "point %d/%d: #%d %s: %s USD, attainment %.2f%% (%s)%n", done.incrementAndGet(),
                  n, index, o.label(), DayPlanTable.fixed(o.scale().cost(), 2).asText(), 100 * o.attainment(),
                  again ? "from an earlier run" : String.format(Locale.ROOT, "%.1f s", (System.nanoTime() - t0) / 1e9));
              w.flush();
            }
          }
          return null;
        }));
      }
      for (int i = 0; i < n; i++) {
        try {
          futures.get(i).get();
        } catch (ExecutionException e) {
          Throwable c = e.getCause();
          String why = c instanceof IllegalArgumentException || c instanceof UncheckedIOException
              ? c.getMessage() : c.getClass().getSimpleName() + ": " + c.getMessage();
          throw new IllegalArgumentException(p.source() + ": point #" + i + " (" + p.points().get(i).label()
              + ") failed: " + BlisCli.oneLine(why), c);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted", e);
        }
      }
    } finally {
      exec.shutdownNow();
    }
    DayPlanTable table = new DayPlanTable(p, List.of(outcomes));
    table.write(out);
    w.print(table.text());
    w.printf(Locale.ROOT, "%d points (%d from an earlier run) in %.1f s; frontier: %d points; best: %s%n", n,
        reused.get(), (System.nanoTime() - start) / 1e9,
        table.frontier().size(), table.best() == null
            ? (p.attainmentTarget() == null ? "no attainment_target in the plan" : "none attains the target")
            : "#" + table.best().index() + " " + table.best().label());
    if (table.outcomes().stream().anyMatch(DayOutcome::examplePrice)) {
      w.println("note: costs use the bundled EXAMPLE GPU prices (illustrative); give the node's price with"
          + " --node-cost-per-hour");
    }
    w.printf(Locale.ROOT, "wrote %s, %s, %s and %s%n", out.resolve(DayPlanTable.CSV), out.resolve(DayPlanTable.SUMMARY),
        out.resolve(DayPlanTable.REPORT), results.resolve("point-N.json"));
    w.flush();
    return 0;
  }

  /**
   * A point's {@code blis run}, parsed and checked; a bad flag is a {@link ParameterException}
   * naming the plan and the point.
   */
  private RunCommand parse(DayPlan p, int index, List<String> args) {
    RunCommand run = new RunCommand();
    CommandLine point = new CommandLine(run);
    PrintWriter silent = new PrintWriter(Writer.nullWriter());
    point.setOut(silent);
    point.setErr(silent);
    String where = p.source() + ": point #" + index + " (" + p.points().get(index).label() + "): ";
    try {
      point.parseArgs(args.toArray(String[]::new));
      for (String flag : REFUSED) {
        if (point.getParseResult().hasMatchedOption(flag)) {
          throw new IllegalArgumentException(flag + " does not apply to a day plan's point (blis day writes each"
              + " point's result to DIR/results)");
        }
      }
      run.check();
      if (!run.autoscaled()) {
        throw new IllegalArgumentException("no --autoscaler: a day plan compares scaler configurations; for a fixed"
            + " fleet give --autoscaler schedule --autoscaler-option replicas=0:N");
      }
    } catch (ParameterException | IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), where + BlisCli.oneLine(e.getMessage()));
    }
    return run;
  }

  /** Whether a flag of {@code blis run} takes an argument; an unknown one is left for the parser to report. */
  private static Predicate<String> takesValue() {
    CommandSpec run = new CommandLine(new RunCommand()).getCommandSpec();
    return name -> {
      CommandLine.Model.OptionSpec o = run.findOption(name);
      return o == null || o.arity().min() > 0;
    };
  }

  private static void write(Path file, String text) {
    try {
      OutputFiles.write(file, text);
    } catch (IOException e) {
      throw new UncheckedIOException(file + ": cannot write: " + e.getMessage(), e);
    }
  }

  /** Beside each point's result: its outcome, and the key of the run that made it. */
  static final String OUTCOME = ".outcome.json";

  /**
   * What identifies a point's run: its arguments, and the SHA-256 of each that names a file (a
   * workload spec or a policy bundle edited since is another run).
   */
  static String key(List<String> args) {
    StringBuilder b = new StringBuilder();
    for (String a : args) {
      b.append(a).append('\n');
      Path file;
      try {
        file = Path.of(a);
      } catch (java.nio.file.InvalidPathException e) {
        continue;
      }
      if (Files.isRegularFile(file)) {
        b.append("  sha256 ").append(io.blis.cli.sweep.SweepGrid.digest(file)).append('\n');
      }
    }
    return b.toString();
  }

  /**
   * The outcome an earlier run of the plan left for this point, when it ran with the same key and
   * its result is there too; else null (a damaged or foreign file is simulated again and replaced).
   */
  private static DayOutcome earlier(Path outcome, Path result, String key, int index, String label) {
    if (!Files.isRegularFile(outcome) || !Files.isRegularFile(result)) {
      return null;
    }
    try {
      JsonNode record = new com.fasterxml.jackson.databind.ObjectMapper().readTree(outcome.toFile());
      if (record == null || !key.equals(record.path("key").asText(null))) {
        return null;
      }
      DayOutcome o = DayOutcome.fromJson(record.get("outcome"));
      return o.index() == index && o.label().equals(label) ? o : null;
    } catch (IOException | IllegalArgumentException e) {
      return null;
    }
  }
}
