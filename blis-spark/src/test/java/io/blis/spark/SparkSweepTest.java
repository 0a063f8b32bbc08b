package io.blis.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.blis.cli.sweep.PriceTable;
import io.blis.cli.sweep.Sweep;
import io.blis.cli.sweep.SweepGrid;
import io.blis.cli.sweep.SweepTable;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** The Spark job against the local sweep, in Spark's local mode with two task threads. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SparkSweepTest {

  /** Short capacity searches: TP 1 with two batch limits, and TP 3, which Llama-2-7B's 32 heads refuse. */
  private static final String CAPACITY = """
      question: capacity
      slo: "ttft_p99=400ms,e2e_p99=15s"
      search: {point_duration_s: 30, min_requests: 100, tolerance: 0.1}
      workload: {preset: chatbot, seed: 11}
      grid:
        tp: [1, 3]
        max_num_seqs: [24, 96]
      """;

  /** Two rates of two GPUs (one without a price here) and a skipped configuration. */
  private static final String RATES = """
      question: rates
      rates: [4, 60]
      slo: "ttft_p99=500ms"
      workload: {preset: chatbot, seed: 3}
      grid:
        gpu: [H100, L40S]
        tp: [1, 3]
        max_num_seqs: 32
      search: {point_duration_s: 30, min_requests: 100}
      """;

  private static final List<String> FILES = List.of(Sweep.CSV, Sweep.JSONL, Sweep.SUMMARY, Sweep.REPORT);

  private SparkSession spark;
  private Path dir;
  private PriceTable prices;

  @BeforeAll
  void startSpark(@TempDir Path tmp) throws IOException {
    dir = tmp;
    Files.writeString(dir.resolve("capacity.yaml"), CAPACITY);
    Files.writeString(dir.resolve("rates.yaml"), RATES);
    Files.writeString(dir.resolve("prices.yaml"), "H100: 2.5\n");
    prices = PriceTable.bundled().overriddenBy(PriceTable.load(dir.resolve("prices.yaml")));
    spark = SparkSession.builder().master("local[2]").appName("blis-spark test")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.debug.maxToStringFields", "100") // plans of the table's 60-odd columns, untruncated
        .getOrCreate();
  }

  @AfterAll
  void stopSpark() {
    spark.stop();
  }

  private Path local(String grid) {
    Path out = dir.resolve("local-" + grid);
    if (!Files.exists(out.resolve(Sweep.CSV))) {
      Sweep.of(SweepGrid.load(dir.resolve(grid))).threads(2).prices(prices).run(out);
    }
    return out;
  }

  private static String read(Path p) throws IOException {
    return Files.readString(p, StandardCharsets.UTF_8);
  }

  /** Every value of every row equals the table's JSON lines, by the column's type. */
  private static void assertRowsEqual(List<Row> rows, List<StructField> fields, Path jsonl) throws IOException {
    ObjectMapper m = new ObjectMapper();
    List<String> lines = read(jsonl).lines().toList();
    assertThat(rows).hasSize(lines.size());
    for (int i = 0; i < rows.size(); i++) {
      JsonNode want = m.readTree(lines.get(i));
      Row row = rows.get(i);
      List<String> names = new ArrayList<>();
      want.fieldNames().forEachRemaining(names::add);
      assertThat(Arrays.asList(row.schema().fieldNames())).isEqualTo(names);
      for (int j = 0; j < fields.size(); j++) {
        JsonNode v = want.get(fields.get(j).name());
        DataType t = fields.get(j).dataType();
        Object expected = v.isNull() ? null : t == DataTypes.LongType ? (Object) v.asLong()
            : t == DataTypes.BooleanType ? (Object) v.asBoolean() : t == DataTypes.StringType ? v.asText()
            : (Object) v.asDouble();
        assertThat(row.isNullAt(j) ? null : row.get(j)).as("row %d %s", i, fields.get(j).name()).isEqualTo(expected);
      }
    }
  }

  @Test
  void theCapacityJobWritesTheLocalSweepsBytesAndItsRows() throws IOException {
    Path out = dir.resolve("spark-capacity");
    SparkSweep.Outcome o = SparkSweep.load(dir.resolve("capacity.yaml")).prices(prices).run(spark, out);
    assertThat(o.tasks()).isEqualTo(4);
    for (String f : FILES) {
      assertThat(read(out.resolve(f))).as(f).isEqualTo(read(local("capacity.yaml").resolve(f)));
    }
    assertThat(out.resolve(Sweep.POINTS)).doesNotExist();
    List<Row> rows = o.rows().collectAsList();
    assertThat(o.rows().schema()).isEqualTo(SparkSweep.schema(SweepGrid.Question.CAPACITY));
    assertRowsEqual(rows, Arrays.asList(o.rows().schema().fields()), out.resolve(Sweep.JSONL));
    assertThat(rows).extracting(r -> r.<String>getAs("status")).containsExactly("ok", "ok", "skipped", "skipped");
    assertThat(rows.get(0).<Double>getAs("capacity_rps")).isPositive();
    assertThat(rows.get(2).<String>getAs("reason")).contains("not divisible by tensor parallelism 3");
    assertThat(o.rows().filter("best").count()).isEqualTo(1);
  }

  @Test
  void theRatesJobInOneTaskGivesTheSameBytesAndTypedColumns() throws IOException {
    Path out = dir.resolve("spark-rates");
    SparkSweep.Outcome o = SparkSweep.load(dir.resolve("rates.yaml")).prices(prices).partitions(1).run(spark, out);
    assertThat(o.tasks()).isEqualTo(1);
    for (String f : FILES) {
      assertThat(read(out.resolve(f))).as(f).isEqualTo(read(local("rates.yaml").resolve(f)));
    }
    List<Row> rows = o.rows().collectAsList();
    assertRowsEqual(rows, Arrays.asList(o.rows().schema().fields()), out.resolve(Sweep.JSONL));
    // one row per configuration and rate; L40S has no price here but the bundled example one
    assertThat(rows).hasSize(8);
    assertThat(o.rows().filter("gpu = 'L40S' AND status = 'ok'").select("example_price").distinct().collectAsList())
        .extracting(r -> r.getBoolean(0)).containsExactly(true);
    assertThat(o.rows().filter("rate_rps = 60 AND status = 'ok'").select("steady").collectAsList())
        .extracting(r -> r.getBoolean(0)).containsOnly(false);
    // without a directory: the same table, no files
    SparkSweep.Outcome again = SparkSweep.load(dir.resolve("rates.yaml")).prices(prices).partitions(3).run(spark);
    assertThat(again.tasks()).isEqualTo(3);
    assertThat(again.table().csv()).isEqualTo(read(out.resolve(Sweep.CSV)));
  }

  @Test
  void everyColumnOfBothQuestionsHasItsType() {
    // every column given a type other than double names a real column (a misspelt or stale name
    // would leave its column a double)
    java.util.Set<String> columns = new java.util.HashSet<>();
    for (SweepGrid.Question q : SweepGrid.Question.values()) {
      columns.addAll(SweepTable.columns(q));
    }
    for (java.util.Set<String> typed : List.of(SweepRows.WHOLE, SweepRows.FLAGS, SweepRows.TEXT)) {
      assertThat(columns).containsAll(typed);
    }
    assertThat(SweepRows.type("index")).isEqualTo(DataTypes.LongType);
    assertThat(SweepRows.type("capacity_rps")).isEqualTo(DataTypes.DoubleType);
    assertThat(SweepRows.type("e2e_p99_ms")).isEqualTo(DataTypes.DoubleType);
    assertThat(SweepRows.type("pareto")).isEqualTo(DataTypes.BooleanType);
    assertThat(SweepRows.type("note")).isEqualTo(DataTypes.StringType);
  }

  @Test
  void aBadGridIsTheEnginesOneLineBeforeSparkRuns() throws IOException {
    String bad = CAPACITY.replace("tp: [1, 3]", "tp: [1, 0]");
    Path file = dir.resolve("bad.yaml");
    Files.writeString(file, bad);
    String engine = catchMessage(() -> SweepGrid.load(file));
    assertThat(engine).isEqualTo(file + ":6:11: grid.tp[1]: must be a whole number of at least 1, got 0");
    assertThatThrownBy(() -> SparkSweep.load(file)).isInstanceOf(IllegalArgumentException.class).hasMessage(engine);
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = SparkSweepMain.execute(new String[] {"--grid", file.toString(), "--out", dir.resolve("o").toString()},
        new PrintWriter(out), new PrintWriter(err));
    assertThat(code).isEqualTo(2);
    assertThat(err.toString()).isEqualTo("blis-spark: " + engine + System.lineSeparator());
    err.getBuffer().setLength(0);
    code = SparkSweepMain.execute(new String[] {"--grid", dir.resolve("none.yaml").toString(), "--out", "o"},
        new PrintWriter(out), new PrintWriter(err));
    assertThat(code).isEqualTo(2);
    assertThat(err.toString()).isEqualTo("blis-spark: --grid: no such file '" + dir.resolve("none.yaml") + "'"
        + System.lineSeparator());
    err.getBuffer().setLength(0);
    code = SparkSweepMain.execute(new String[] {"--grid", file.toString(), "--out", "o", "--partitions", "-1"},
        new PrintWriter(out), new PrintWriter(err));
    assertThat(code).isEqualTo(2);
    assertThat(err.toString()).startsWith("blis-spark: ");
    assertThat(out.toString()).isEmpty();
  }

  private static String catchMessage(Runnable r) {
    try {
      r.run();
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
    throw new AssertionError("no exception");
  }

  @Test
  void aWorkloadFileThatChangedUnderTheExecutorsIsOneLine() throws IOException {
    Path spec = dir.resolve("workload.yaml");
    Files.copy(Path.of("..", "docs", "examples", "cluster-workload.yaml"), spec);
    Path grid = dir.resolve("spec.yaml");
    Files.writeString(grid, RATES.replace("{preset: chatbot, seed: 3}", "{spec: workload.yaml}"));
    SparkSweep sweep = SparkSweep.load(grid);
    Files.writeString(spec, "# edited after the driver read it\n" + read(spec));
    assertThatThrownBy(() -> sweep.run(spark)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(grid + " has fingerprint ")
        .hasMessageContaining("on the driver: the workload or coefficient files it names differ")
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
  }

  @Test
  void theMainClassRunsOnTheSessionAndReportsTheBest() throws IOException {
    Path out = dir.resolve("main-rates");
    StringWriter o = new StringWriter();
    StringWriter err = new StringWriter();
    Path p = dir.resolve("prices.yaml");
    int code = SparkSweepMain.execute(new String[] {"--grid", dir.resolve("rates.yaml").toString(), "--out",
        out.toString(), "--prices", p.toString(), "--partitions", "2"}, new PrintWriter(o), new PrintWriter(err));
    assertThat(err.toString()).isEmpty();
    assertThat(code).isZero();
    assertThat(o.toString()).startsWith("4 configurations, question rates, on local[2]")
        .contains("4 configurations (2 skipped) as 2 Spark tasks in ").contains("best: model=");
    for (String f : FILES) {
      assertThat(read(out.resolve(f))).as(f).isEqualTo(read(local("rates.yaml").resolve(f)));
    }
    assertThat(spark.sparkContext().isStopped()).as("a session it did not start stays up").isFalse();
  }
}
