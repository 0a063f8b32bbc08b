package io.blis.spark;

import com.fasterxml.jackson.databind.JsonNode;
import io.blis.cli.sweep.PriceTable;
import io.blis.cli.sweep.Sweep;
import io.blis.cli.sweep.SweepGrid;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The {@code spark-submit} entry point: {@code blis sweep}'s grid, prices and output directory, run
 * as a Spark job ({@link SparkSweep}). The master comes from {@code spark-submit --master} (or
 * the {@code spark.master} system property); without one, {@code local[*]}, as {@code
 * spark-submit} itself defaults.
 *
 * <p>Exit codes: 0 success, 2 bad input (a missing or invalid grid or price file, an unusable
 * output directory), 1 anything else. Errors are one line on stderr.
 */
@Command(
    name = "blis-spark",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {"blis sweep as an Apache Spark job: each configuration of a grid file one task; writes DIR/sweep.csv,"
        + " DIR/sweep.jsonl, DIR/summary.json and DIR/report.html on the driver (format: docs/capacity.md, Sweeps)."})
public final class SparkSweepMain implements Callable<Integer> {

  /** Exit code of bad input. */
  static final int USAGE_ERROR = 2;

  @Option(names = "--grid", required = true, paramLabel = "FILE",
      description = "Grid file (YAML), read on the driver; files it names must be at the same paths on the executors.")
  Path grid;

  @Option(names = "--out", required = true, paramLabel = "DIR", description = "Output directory on the driver.")
  Path out;

  @Option(names = "--prices", paramLabel = "FILE",
      description = "GPU prices, YAML 'GPU: USD per GPU-hour', replacing the bundled example prices GPU by GPU.")
  Path prices;

  @Option(names = "--partitions", paramLabel = "N",
      description = "Spark tasks to split the configurations into (default: one per configuration).")
  int partitions;

  private PrintWriter w;

  @Override
  public Integer call() {
    SparkSweep sweep = SparkSweep.load(requireFile("--grid", grid)).partitions(partitions);
    if (prices != null) {
      sweep.prices(PriceTable.bundled().overriddenBy(PriceTable.load(requireFile("--prices", prices))));
    }
    try {
      Files.createDirectories(out);
    } catch (IOException e) {
      throw new IllegalArgumentException("--out: cannot create the directory '" + out + "': " + e.getMessage(), e);
    }
    boolean ours = SparkSession.getDefaultSession().isEmpty();
    SparkSession.Builder b = SparkSession.builder().appName("blis sweep " + grid.getFileName());
    if (!new SparkConf().contains("spark.master")) {
      b.master("local[*]");
    }
    SparkSession spark = b.getOrCreate();
    try {
      SweepGrid g = sweep.grid();
      w.printf(Locale.ROOT, "%d configurations, question %s, on %s%n", g.configs().size(), g.question().key(),
          spark.sparkContext().master());
      w.flush();
      SparkSweep.Outcome o = sweep.run(spark, out);
      JsonNode s = o.table().summary();
      w.printf(Locale.ROOT, "%d configurations (%d skipped) as %d Spark tasks in %.1f s%n", g.configs().size(),
          s.path("skipped").asInt(), o.tasks(), o.wallSeconds());
      JsonNode best = s.get("best");
      w.println(best == null || best.isNull() ? "best: none (no configuration meets the SLO with a known price)"
          : "best: " + best.path("key").asText() + ": " + best.path("rps_per_usd_hour").asText()
              + " req/s per USD-hour" + (best.path("example_price").asBoolean() ? " [example price]" : ""));
      w.printf(Locale.ROOT, "wrote %s, %s, %s%n", out.resolve(Sweep.CSV), out.resolve(Sweep.JSONL),
          out.resolve(Sweep.SUMMARY));
      w.flush();
      return 0;
    } finally {
      if (ours) {
        spark.stop();
      }
    }
  }

  private static Path requireFile(String flag, Path file) {
    if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException(flag + ": " + (Files.isDirectory(file) ? "'" + file
          + "' is a directory, expected a file" : "no such file '" + file + "'"));
    }
    return file;
  }

  /** Runs {@code args} and returns the exit code (no {@code System.exit}). */
  static int execute(String[] args, PrintWriter out, PrintWriter err) {
    SparkSweepMain main = new SparkSweepMain();
    main.w = out;
    CommandLine cl = new CommandLine(main);
    cl.setOut(out);
    cl.setErr(err);
    cl.setParameterExceptionHandler((e, a) -> {
      err.println("blis-spark: " + oneLine(e.getMessage()) + " (see --help)");
      return USAGE_ERROR;
    });
    cl.setExecutionExceptionHandler((e, c, parsed) -> {
      boolean bad = e instanceof IllegalArgumentException || e instanceof UncheckedIOException;
      err.println("blis-spark: " + (bad ? "" : "internal error: " + e.getClass().getSimpleName() + ": ")
          + oneLine(e.getMessage()));
      return bad ? USAGE_ERROR : 1;
    });
    int code = cl.execute(args);
    out.flush();
    err.flush();
    return code;
  }

  private static String oneLine(String message) {
    return message == null ? "" : message.replaceAll("\\s*\\R\\s*", " ").trim();
  }

  public static void main(String[] args) {
    System.exit(execute(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
  }
}
