package io.blis.spark;

import io.blis.cli.sweep.PriceTable;
import io.blis.cli.sweep.Sweep;
import io.blis.cli.sweep.SweepConfig;
import io.blis.cli.sweep.SweepGrid;
import io.blis.cli.sweep.SweepTable;
import io.blis.workload.TextFiles;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructType;

/**
 * {@code blis sweep} as a Spark job: each configuration of a grid is one task ({@link
 * Sweep#evaluateLine} on an executor), the records come back to the driver as JSON lines, and the
 * driver builds the engine's table from them ({@link Sweep#table}), so that the rows and the files
 * are those of a local {@link Sweep} of the same grid and prices, byte for byte.
 *
 * <pre>{@code
 * SparkSweep.Outcome o = SparkSweep.load(Path.of("grid.yaml"))
 *     .prices(PriceTable.bundled().overriddenBy(PriceTable.load(Path.of("prices.yaml"))))
 *     .run(spark, Path.of("out/sweep"));        // or run(spark): no files
 * o.rows().filter("meets_slo").orderBy(col("rps_per_usd_hour").desc()).show();
 * }</pre>
 *
 * <p>Only the grid file's text and a configuration's index cross to the executors; each parses
 * the text again. A grid naming files (a workload spec or trace, coefficients, model or GPU JSON)
 * needs them at the same absolute paths on every executor (a shared file system); the grid's
 * fingerprint, checked on each executor, catches a workload or coefficient file that differs.
 * Prices are applied on the driver. Nothing is resumed: {@code points.jsonl} is not written.
 */
public final class SparkSweep {

  /**
   * What a run did.
   *
   * @param table the engine's table (rows, CSV, JSON lines, summary)
   * @param rows the table as a DataFrame: the same rows in the same order, the same columns
   * @param tasks the Spark tasks the configurations were split into
   * @param wallSeconds elapsed time on the driver, from submitting the job to the table
   */
  public record Outcome(SweepTable table, Dataset<Row> rows, int tasks, double wallSeconds) {}

  private final GridText text;
  private final SweepGrid grid;
  private PriceTable prices = PriceTable.bundled();
  private int partitions;

  private SparkSweep(GridText text, SweepGrid grid) {
    this.text = text;
    this.grid = grid;
  }

  /**
   * Reads and checks a grid file, as {@link SweepGrid#load} does (relative paths are relative to
   * its directory).
   *
   * @throws IllegalArgumentException one line naming the file, line, column and key
   */
  public static SparkSweep load(Path gridFile) {
    String text = TextFiles.readConfig(gridFile);
    Path dir = gridFile.toAbsolutePath().getParent();
    return parse(text, gridFile.toString(), dir == null ? Path.of("") : dir);
  }

  /** Parses and checks grid text, as {@link SweepGrid#parse} does. */
  public static SparkSweep parse(String text, String source, Path baseDir) {
    SweepGrid grid = SweepGrid.parse(text, source, baseDir);
    return new SparkSweep(GridText.of(text, grid), grid);
  }

  /** The GPU prices of the cost columns (default: the bundled example prices). */
  public SparkSweep prices(PriceTable p) {
    this.prices = Objects.requireNonNull(p, "prices");
    return this;
  }

  /**
   * Spark tasks to split the configurations into; 0 (the default) for one task per configuration.
   * More than the configurations is one task per configuration.
   */
  public SparkSweep partitions(int n) {
    if (n < 0) {
      throw new IllegalArgumentException("partitions must be 0 (one per configuration) or more, got " + n);
    }
    this.partitions = n;
    return this;
  }

  /** The grid, as parsed on the driver. */
  public SweepGrid grid() {
    return grid;
  }

  /**
   * The schema of {@link Outcome#rows()} for a question: the table's columns in order, nullable;
   * whole numbers {@code long}, flags {@code boolean}, texts {@code string}, other numbers {@code
   * double}.
   */
  public static StructType schema(SweepGrid.Question question) {
    return SweepRows.schema(question);
  }

  /** Runs every configuration on the session's cluster and returns the table; writes nothing. */
  public Outcome run(SparkSession spark) {
    long start = System.nanoTime();
    int tasks = partitions == 0 ? grid.configs().size() : Math.min(partitions, grid.configs().size());
    List<String> records = evaluate(spark, tasks);
    SweepTable table = Sweep.table(grid, prices, records);
    Dataset<Row> rows = spark.createDataFrame(SweepRows.rows(table), SweepRows.schema(grid.question()));
    return new Outcome(table, rows, tasks, (System.nanoTime() - start) / 1e9);
  }

  /**
   * Runs every configuration and writes {@code sweep.csv}, {@code sweep.jsonl}, {@code
   * summary.json} and {@code report.html} to {@code dir} on the driver, as {@code blis sweep} writes
   * them.
   */
  public Outcome run(SparkSession spark, Path dir) {
    Outcome o = run(spark);
    Sweep.write(o.table(), dir);
    return o;
  }

  private List<String> evaluate(SparkSession spark, int tasks) {
    List<Integer> indices = new ArrayList<>();
    for (int i = 0; i < grid.configs().size(); i++) {
      indices.add(i);
    }
    GridText shipped = text;
    JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    sc.setJobDescription("blis sweep " + grid.source() + ": " + grid.configs().size() + " configurations");
    try {
      return sc.parallelize(indices, tasks).map(i -> evaluate(shipped, i)).collect();
    } catch (Exception e) { // SparkException is checked but not declared by collect()
      throw failure(e);
    } finally {
      sc.setJobDescription(null);
    }
  }

  /** One task: the record of configuration {@code index}. */
  private static String evaluate(GridText text, int index) {
    SweepGrid g = text.grid();
    SweepConfig c = g.configs().get(index);
    try {
      return Sweep.evaluateLine(g, c);
    } catch (IllegalArgumentException | UncheckedIOException e) {
      throw new IllegalArgumentException(c.key() + ": " + e.getMessage(), e);
    } catch (RuntimeException e) {
      throw new IllegalStateException(c.key() + ": " + e, e);
    }
  }

  /**
   * The failure of a job as the engine reports it: the task's own exception when Spark kept it
   * (bad input stays an {@link IllegalArgumentException}), else Spark's first line.
   */
  private static RuntimeException failure(Exception e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof IllegalArgumentException || t instanceof IllegalStateException) {
        return (RuntimeException) t;
      }
    }
    String m = String.valueOf(e.getMessage());
    int nl = m.indexOf('\n');
    return new IllegalStateException("the Spark job failed: " + (nl < 0 ? m : m.substring(0, nl)), e);
  }
}
