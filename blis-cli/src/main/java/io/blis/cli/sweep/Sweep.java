package io.blis.cli.sweep;

import io.blis.engine.result.OutputFiles;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Runs a {@link SweepGrid}: every configuration's question on a pool of threads, each finished
 * configuration appended at once to {@code DIR/points.jsonl} (so that a killed sweep continues
 * where it stopped), then the table in grid order written atomically to {@code DIR/sweep.csv},
 * {@code DIR/sweep.jsonl} and {@code DIR/summary.json}, and its charts to {@code DIR/report.html}.
 *
 * <pre>{@code
 * SweepGrid grid = SweepGrid.load(Path.of("grid.yaml"));
 * Sweep.Outcome o = Sweep.of(grid).threads(4).prices(PriceTable.bundled()).run(Path.of("out/sweep"));
 * o.table().rows().forEach(r -> System.out.println(r.get("key") + " " + r.get("capacity_rps")));
 * }</pre>
 *
 * <p><b>Determinism.</b> A configuration's result depends only on the grid (each simulation is
 * seeded and single-threaded), and the tables and the report are computed from the recorded lines
 * alone, read back from the file; so the same grid gives the same bytes whatever the number of
 * threads and however often the sweep was interrupted and resumed.
 *
 * <p><b>Resuming.</b> Each line of {@code points.jsonl} carries the configuration's {@link
 * SweepConfig#key() key} and the grid's {@link SweepGrid#fingerprint() fingerprint} (question,
 * targets, rates, workload, shared deployment, search settings). A configuration with a line of
 * the same key and fingerprint is not run again. A last line without its newline (the sweep was
 * killed while writing it) is cut off; lines of another fingerprint are kept but not used.
 *
 * <p><b>Rates one by one.</b> With question rates and more than one rate, each rate of a
 * configuration is its own unit of work: run on any thread and appended as a rate line ({@code
 * rate_of} KEY, {@code rate_index}, {@code point}) as soon as it is done; when the last rate of a
 * configuration is done, its record (the points in rate order, as one run of its rates gives) is
 * appended too. So a configuration of many rates is checkpointed rate by rate, and a sweep killed
 * in the middle of it reruns only the rates not recorded.
 */
public final class Sweep {

  /** Recorded configurations, appended as they finish. */
  public static final String POINTS = "points.jsonl";
  /** The table as CSV. */
  public static final String CSV = "sweep.csv";
  /** The table as JSON lines. */
  public static final String JSONL = "sweep.jsonl";
  /** The question, the best configuration, the Pareto frontier and the prices. */
  public static final String SUMMARY = "summary.json";
  /** The charts: latency against throughput per configuration, the Pareto frontier, the best. */
  public static final String REPORT = "report.html";

  private static final ObjectMapper WRITER = JsonMapper.builder()
      .enable(JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN).build();
  private static final ObjectMapper PRETTY = JsonMapper.builder()
      .enable(JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN).enable(SerializationFeature.INDENT_OUTPUT).build();
  private static final ObjectMapper READER = JsonMapper.builder()
      .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
      .nodeFactory(JsonNodeFactory.withExactBigDecimals(true)).build();

  /**
   * What a run did.
   *
   * @param table the table of every configuration
   * @param reused configurations found in {@code points.jsonl}
   * @param simulated configurations run now
   * @param wallSeconds elapsed time of the run
   */
  public record Outcome(SweepTable table, int reused, int simulated, double wallSeconds) {}

  private final SweepGrid grid;
  private int threads = Runtime.getRuntime().availableProcessors();
  private PriceTable prices = PriceTable.bundled();
  private Consumer<String> progress = line -> {};

  private Sweep(SweepGrid grid) {
    this.grid = Objects.requireNonNull(grid, "grid");
  }

  /** A sweep of {@code grid} on every processor, with the bundled example prices, silent. */
  public static Sweep of(SweepGrid grid) {
    return new Sweep(grid);
  }

  /** Configurations run at once (default: the available processors). */
  public Sweep threads(int n) {
    if (n < 1 || n > 1024) {
      throw new IllegalArgumentException("threads must be in [1, 1024], got " + n);
    }
    this.threads = n;
    return this;
  }

  /** The GPU prices of the cost columns. */
  public Sweep prices(PriceTable p) {
    this.prices = Objects.requireNonNull(p, "prices");
    return this;
  }

  /** Receives one line per finished configuration and a few about resuming. */
  public Sweep progress(Consumer<String> p) {
    this.progress = Objects.requireNonNull(p, "progress");
    return this;
  }

  /**
   * Answers the grid's question for one configuration, without files: the record {@code
   * points.jsonl} holds for it (key, fingerprint, status, and the results).
   */
  public static ObjectNode evaluate(SweepGrid grid, SweepConfig config) {
    ObjectNode rec = JsonNodeFactory.withExactBigDecimals(true).objectNode();
    rec.put("fingerprint", grid.fingerprint());
    rec.put("key", config.key());
    rec.setAll(PointRun.run(grid, config));
    return rec;
  }

  /**
   * {@link #evaluate} as one line of JSON (no newline), decimals written plainly, as {@code
   * points.jsonl} holds it without {@code elapsed_s}: what a runner elsewhere (another process or
   * machine) sends back, to be read by {@link #table}.
   */
  public static String evaluateLine(SweepGrid grid, SweepConfig config) {
    return line(evaluate(grid, config));
  }

  /**
   * The table of records given as JSON lines ({@link #evaluateLine}, or the lines of a {@code
   * points.jsonl}), read exactly as {@link #run} reads its file, so that the same records give the
   * same bytes.
   *
   * @param records one record per configuration of {@code grid}, in any order (rate lines of a {@code
   *     points.jsonl}, each one rate of a configuration, are passed over)
   * @throws IllegalArgumentException for a line that is not a record, a record of another
   *     fingerprint or of no configuration of the grid, and a configuration recorded twice or not
   *     at all
   */
  public static SweepTable table(SweepGrid grid, PriceTable prices, List<String> records) {
    String fingerprint = grid.fingerprint();
    Map<String, JsonNode> byKey = new LinkedHashMap<>();
    for (int i = 0; i < records.size(); i++) {
      JsonNode rec;
      try {
        rec = READER.readTree(records.get(i));
      } catch (JsonProcessingException e) {
        throw new IllegalArgumentException("record " + (i + 1) + ": not JSON (" + e.getOriginalMessage() + ")");
      }
      if (isRateLine(rec)) {
        continue; // one rate of a configuration whose record has them all
      }
      if (rec == null || !rec.isObject() || !rec.path("key").isTextual() || !rec.path("fingerprint").isTextual()
          || !rec.path("status").isTextual()) {
        throw new IllegalArgumentException("record " + (i + 1) + ": not a sweep record (needs key, fingerprint and status)");
      }
      String key = rec.get("key").asText();
      if (!rec.get("fingerprint").asText().equals(fingerprint)) {
        throw new IllegalArgumentException("record " + (i + 1) + " (" + key + ") has fingerprint "
            + rec.get("fingerprint").asText() + ", " + grid.source() + " has " + fingerprint
            + ": it answers another question, workload or settings, or was computed from other files");
      }
      if (byKey.put(key, rec) != null) {
        throw new IllegalArgumentException("record " + (i + 1) + ": " + key + " is recorded twice");
      }
    }
    List<JsonNode> ordered = new ArrayList<>();
    for (SweepConfig c : grid.configs()) {
      JsonNode r = byKey.remove(c.key());
      if (r == null) {
        throw new IllegalArgumentException("no record of " + c.key());
      }
      ordered.add(r);
    }
    if (!byKey.isEmpty()) {
      throw new IllegalArgumentException("a record of " + byKey.keySet().iterator().next() + ", which is no"
          + " configuration of " + grid.source());
    }
    return SweepTable.of(grid, prices, ordered);
  }

  /**
   * Writes a table's {@code sweep.csv}, {@code sweep.jsonl}, {@code summary.json} and {@code
   * report.html} to {@code dir} (created if missing) as {@link #run} writes them, each to a
   * temporary file moved into place.
   */
  public static void write(SweepTable table, Path dir) {
    try {
      Files.createDirectories(dir);
      OutputFiles.write(dir.resolve(CSV), table.csv());
      OutputFiles.write(dir.resolve(JSONL), table.jsonLines());
      OutputFiles.write(dir.resolve(SUMMARY), pretty(table.summary()));
      OutputFiles.write(dir.resolve(REPORT), SweepReport.html(table));
    } catch (IOException e) {
      throw new UncheckedIOException(dir + ": cannot write the tables: " + e.getMessage(), e);
    }
  }

  /**
   * Runs every configuration not yet recorded in {@code dir} and writes the tables there.
   *
   * @throws IllegalArgumentException for an unusable directory or a damaged {@code points.jsonl}
   * @throws IllegalStateException when a configuration fails unexpectedly (the ones finished are
   *     recorded; a rerun continues)
   */
  public Outcome run(Path dir) {
    long start = System.nanoTime();
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("--out " + dir + ": cannot create the directory: " + e.getMessage(), e);
    }
    Path points = dir.resolve(POINTS);
    String fingerprint = grid.fingerprint();
    try (DirectoryLock lock = DirectoryLock.acquire(dir)) {
      Map<String, Map<Integer, JsonNode>> rateLines = new java.util.HashMap<>();
      Map<String, JsonNode> recorded = read(points, fingerprint, true, rateLines);
      List<SweepConfig> pending = new ArrayList<>();
      for (SweepConfig c : grid.configs()) {
        if (!recorded.containsKey(c.key())) {
          pending.add(c);
        }
      }
      int reused = grid.configs().size() - pending.size();
      int reusedRates = 0;
      for (SweepConfig c : pending) {
        reusedRates += rateLines.getOrDefault(c.key(), Map.of()).size();
      }
      if (reused > 0 || reusedRates > 0) {
        progress.accept(String.format(Locale.ROOT, "%d of %d configurations already in %s%s; running %d", reused,
            grid.configs().size(), points, reusedRates == 0 ? ""
                : String.format(Locale.ROOT, ", and %d rates of the others", reusedRates), pending.size()));
      }
      runAll(pending, rateLines, points);
      Map<String, JsonNode> all = read(points, fingerprint, false, new java.util.HashMap<>());
      List<JsonNode> ordered = new ArrayList<>();
      for (SweepConfig c : grid.configs()) {
        JsonNode r = all.get(c.key());
        if (r == null) {
          throw new IllegalStateException(points + ": no record of " + c.key() + " after the run");
        }
        ordered.add(r);
      }
      SweepTable table = SweepTable.of(grid, prices, ordered);
      write(table, dir);
      return new Outcome(table, reused, pending.size(), (System.nanoTime() - start) / 1e9);
    } catch (IOException e) {
      throw new UncheckedIOException("--out " + dir + ": " + e.getMessage(), e);
    }
  }

  /**
   * The lock that keeps two sweeps from writing one directory: a lock on {@code DIR/.sweep.lock},
   * which the holder deletes when it is done (no file stays behind). A contender that opened the
   * file before the holder deleted it could lock the deleted file; so the lock counts only when the
   * path still names the file that was there before it was opened (same file key), else it is
   * dropped and taken again.
   */
  private static final class DirectoryLock implements AutoCloseable {
    private final Path file;
    private final FileChannel channel;
    private final FileLock lock;

    private DirectoryLock(Path file, FileChannel channel, FileLock lock) {
      this.file = file;
      this.channel = channel;
      this.lock = lock;
    }

    static DirectoryLock acquire(Path dir) throws IOException {
      Path file = dir.resolve(".sweep.lock");
      for (int attempt = 0; attempt < 100; attempt++) {
        Object before = fileKey(file);
        FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock l;
        try {
          l = ch.tryLock();
        } catch (OverlappingFileLockException e) {
          l = null;
        }
        if (l == null) {
          ch.close();
          throw new IllegalArgumentException("--out " + dir + ": another sweep is writing this directory");
        }
        if (before != null && before.equals(fileKey(file))) {
          return new DirectoryLock(file, ch, l);
        }
        ch.close(); // created it, or the file was replaced meanwhile: take the lock of the file there now
      }
      throw new IllegalArgumentException("--out " + dir + ": could not lock .sweep.lock (it keeps being replaced)");
    }

    private static Object fileKey(Path file) throws IOException {
      try {
        Object key = Files.readAttributes(file, java.nio.file.attribute.BasicFileAttributes.class,
            java.nio.file.LinkOption.NOFOLLOW_LINKS).fileKey();
        return key != null ? key : file; // no file keys on this file system: the path stands for the file
      } catch (java.nio.file.NoSuchFileException e) {
        return null;
      }
    }

    @Override
    public void close() throws IOException {
      try {
        Files.deleteIfExists(file); // while still locked: a contender then finds the file gone or new
      } finally {
        lock.release();
        channel.close();
      }
    }
  }

  /** Whether each rate of a configuration is a unit of work of its own (question rates, several rates). */
  private boolean rateByRate() {
    return grid.question() == SweepGrid.Question.RATES && grid.rates().size() > 1;
  }

  /**
   * Runs the pending configurations, appending each to {@code points} as it finishes; with {@link
   * #rateByRate}, each rate not among {@code rateLines} (by configuration key, by rate index) too.
   */
  private void runAll(List<SweepConfig> pending, Map<String, Map<Integer, JsonNode>> rateLines, Path points)
      throws IOException {
    if (pending.isEmpty()) {
      return;
    }
    // progress names each configuration as the report does: #its index in the grid
    Map<String, Integer> gridIndex = new java.util.HashMap<>();
    for (int i = 0; i < grid.configs().size(); i++) {
      gridIndex.putIfAbsent(grid.configs().get(i).key(), i);
    }
    try (OutputStream out = Files.newOutputStream(points, StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
      List<Unit> units = new ArrayList<>();
      for (SweepConfig c : pending) {
        if (!rateByRate()) {
          units.add(new Unit(c, null, -1));
          continue;
        }
        ObjectNode rec = JsonNodeFactory.withExactBigDecimals(true).objectNode();
        rec.put("fingerprint", grid.fingerprint());
        rec.put("key", c.key());
        rec.setAll(PointRun.header(grid, c));
        if (!rec.path("status").asText().equals("ok")) {
          units.add(new Unit(c, null, -1)); // skipped: answered at once, as a whole
          continue;
        }
        ConfigInProgress job = new ConfigInProgress(rec, grid.rates().size(), rateLines.getOrDefault(c.key(), Map.of()));
        if (job.left.get() == 0) { // every rate recorded, not the configuration: killed in between
          append(out, points, job.record());
          continue;
        }
        for (int i = 0; i < grid.rates().size(); i++) {
          if (job.points[i] == null) {
            units.add(new Unit(c, job, i));
          }
        }
      }
      AtomicInteger done = new AtomicInteger();
      List<Runnable> work = new ArrayList<>();
      for (Unit u : units) {
        work.add(() -> {
          String what = run(u, out, points);
          progress.accept(String.format(Locale.ROOT, "[%d/%d] #%d %s", done.incrementAndGet(), units.size(),
              gridIndex.get(u.config().key()), what));
        });
      }
      runUnits(work, units.stream().map(u -> u.config().key()).toList(), points);
    }
  }

  /** Appends one record as a line of {@code points}, flushed; lines of several threads never mix. */
  private static void append(OutputStream out, Path points, ObjectNode rec) {
    byte[] line = (line(rec) + "\n").getBytes(StandardCharsets.UTF_8);
    synchronized (out) {
      try {
        out.write(line);
        out.flush();
      } catch (IOException e) {
        throw new UncheckedIOException(points + ": cannot append: " + e.getMessage(), e);
      }
    }
  }

  /** A configuration of question rates whose rates run one by one: its points so far, in rate order. */
  private static final class ConfigInProgress {
    final ObjectNode header;
    final JsonNode[] points;
    final AtomicInteger left;
    final java.util.concurrent.atomic.DoubleAdder elapsed = new java.util.concurrent.atomic.DoubleAdder();

    ConfigInProgress(ObjectNode header, int rates, Map<Integer, JsonNode> recorded) {
      this.header = header;
      this.points = new JsonNode[rates];
      int have = 0;
      for (Map.Entry<Integer, JsonNode> e : recorded.entrySet()) {
        if (e.getKey() >= 0 && e.getKey() < rates) {
          points[e.getKey()] = e.getValue();
          have++;
        }
      }
      this.left = new AtomicInteger(rates - have);
    }

    /** The configuration's record, as {@link #evaluate} gives it, once every rate is done. */
    synchronized ObjectNode record() {
      ObjectNode rec = header.deepCopy();
      com.fasterxml.jackson.databind.node.ArrayNode rates = rec.putArray("rates");
      for (JsonNode p : points) {
        rates.add(p);
      }
      rec.put("elapsed_s", PointRun.round(elapsed.sum())); // of this run's rates; not used by the tables
      return rec;
    }

    synchronized void set(int rate, JsonNode point) {
      points[rate] = point;
    }
  }

  /**
   * A unit of work: a whole configuration ({@code job} null), or the {@code rate}-th rate of a
   * configuration whose rates run one by one.
   */
  private record Unit(SweepConfig config, ConfigInProgress job, int rate) {}

  /** Runs {@code u}, appends what it found, and returns it as its progress line tells it (after "#INDEX "). */
  private String run(Unit u, OutputStream out, Path points) {
    SweepConfig c = u.config();
    long t0 = System.nanoTime();
    if (u.job() == null) {
      ObjectNode rec = evaluate(grid, c);
      double s = (System.nanoTime() - t0) / 1e9;
      rec.put("elapsed_s", PointRun.round(s)); // not used by the tables
      append(out, points, rec);
      return String.format(Locale.ROOT, "%s: %s (%.1f s)", c.key(), describe(rec), s);
    }
    ObjectNode point = PointRun.ratePoint(grid, c, u.rate());
    double s = (System.nanoTime() - t0) / 1e9;
    ObjectNode line = JsonNodeFactory.withExactBigDecimals(true).objectNode();
    line.put("fingerprint", grid.fingerprint());
    line.put("rate_of", c.key());
    line.put("rate_index", u.rate());
    line.set("point", point);
    line.put("elapsed_s", PointRun.round(s)); // not used by the tables
    append(out, points, line);
    u.job().elapsed.add(s);
    u.job().set(u.rate(), point);
    if (u.job().left.decrementAndGet() == 0) {
      append(out, points, u.job().record()); // the last of its rates: the configuration's record
    }
    return String.format(Locale.ROOT, "%s @ %s req/s: %s (%.1f s)", c.key(), point.path("rate_rps").asText(),
        describeRate(point), s);
  }

  /** Runs the units on the pool of threads; the first failure stops the others and is thrown. */
  private void runUnits(List<Runnable> units, List<String> unitKeys, Path points) {
    AtomicInteger threadNo = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, Math.min(threads, units.size())), r -> {
      Thread t = new Thread(r, "blis-sweep-" + threadNo.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (Runnable u : units) {
        futures.add(pool.submit(u));
      }
      for (int i = 0; i < futures.size(); i++) {
        try {
          futures.get(i).get();
        } catch (ExecutionException e) {
          futures.forEach(f -> f.cancel(false));
          pool.shutdown();
          awaitQuietly(pool);
          Throwable cause = e.getCause();
          if (cause instanceof IllegalArgumentException || cause instanceof UncheckedIOException) {
            throw new IllegalArgumentException(unitKeys.get(i) + ": " + cause.getMessage(), cause);
          }
          throw new IllegalStateException(unitKeys.get(i) + ": " + cause, cause);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          futures.forEach(f -> f.cancel(false));
          throw new IllegalStateException("sweep interrupted; finished configurations are in " + points, e);
        }
      }
    } finally {
      pool.shutdown();
    }
  }

  private static void awaitQuietly(ExecutorService pool) {
    try {
      pool.awaitTermination(1, TimeUnit.DAYS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** One rate's point as a progress line tells it. */
  private static String describeRate(JsonNode p) {
    return (p.path("steady").asBoolean() ? "steady" : "not steady")
        + (p.path("meets_slo").isBoolean() ? (p.path("meets_slo").asBoolean() ? ", meets SLO" : ", misses SLO") : "");
  }

  private static String describe(JsonNode rec) {
    if (!rec.path("status").asText().equals("ok")) {
      return "skipped: " + rec.path("reason").asText();
    }
    if (rec.has("rates")) {
      List<String> parts = new ArrayList<>();
      for (JsonNode p : rec.get("rates")) {
        parts.add(p.path("rate_rps").asText() + " req/s " + (p.path("steady").asBoolean() ? "steady" : "not steady")
            + (p.path("meets_slo").isBoolean() ? (p.path("meets_slo").asBoolean() ? ", meets SLO" : ", misses SLO") : ""));
      }
      return String.join("; ", parts);
    }
    JsonNode cap = rec.path("capacity");
    String s = cap.path("rate_rps").isNull() ? "no rate meets the SLO"
        : "capacity " + (cap.path("lower_bound").asBoolean() ? ">= " : "") + cap.path("rate_rps").asText() + " req/s";
    JsonNode iv = cap.get("interval");
    if (iv != null) {
      s += " (" + Math.round(100 * iv.path("level").asDouble()) + "% interval " + iv.path("low_rps").asText() + " - "
          + iv.path("high_rps").asText() + ")";
    }
    JsonNode sat = rec.get("saturation");
    if (sat != null) {
      s += ", saturation " + (sat.path("rate_rps").isNull() ? "none" : sat.path("rate_rps").asText() + " req/s");
    }
    return s;
  }

  /**
   * The records of {@code points.jsonl} with the fingerprint, by key (the first of a key wins).
   *
   * @param repair cut off a last line without its newline (a killed write) and report lines of
   *     other fingerprints
   * @param rateLines receives the rate lines with the fingerprint ({@link #rateByRate}): their
   *     points by configuration key and rate index (the first of an index wins)
   */
  private Map<String, JsonNode> read(Path points, String fingerprint, boolean repair,
      Map<String, Map<Integer, JsonNode>> rateLines) throws IOException {
    Map<String, JsonNode> out = new LinkedHashMap<>();
    if (!Files.exists(points)) {
      return out;
    }
    byte[] bytes = Files.readAllBytes(points);
    int end = bytes.length;
    while (end > 0 && bytes[end - 1] != '\n') {
      end--;
    }
    if (end < bytes.length) {
      if (!repair) {
        throw new IllegalStateException(points + " ends in a partial line after the run");
      }
      try (FileChannel ch = FileChannel.open(points, StandardOpenOption.WRITE)) {
        ch.truncate(end);
      }
      progress.accept(String.format(Locale.ROOT, "%s: ignored a half-written last line (%d bytes)", points,
          bytes.length - end));
    }
    String text = new String(bytes, 0, end, StandardCharsets.UTF_8);
    int lineNo = 0;
    int other = 0;
    for (String line : text.split("\n", -1)) {
      lineNo++;
      if (line.isBlank()) {
        continue;
      }
      JsonNode rec;
      try {
        rec = READER.readTree(line);
      } catch (JsonProcessingException e) {
        throw new IllegalArgumentException(points + ":" + lineNo + ": not a sweep record (" + e.getOriginalMessage()
            + "); remove the line or use another --out directory");
      }
      if (isRateLine(rec)) {
        if (!rec.get("fingerprint").asText().equals(fingerprint)) {
          other++;
        } else {
          rateLines.computeIfAbsent(rec.get("rate_of").asText(), k -> new java.util.HashMap<>())
              .putIfAbsent(rec.get("rate_index").asInt(), rec.get("point"));
        }
        continue;
      }
      if (rec == null || !rec.isObject() || !rec.path("key").isTextual() || !rec.path("fingerprint").isTextual()
          || !rec.path("status").isTextual()) {
        throw new IllegalArgumentException(points + ":" + lineNo + ": not a sweep record (needs key, fingerprint and"
            + " status); remove the line or use another --out directory");
      }
      if (!rec.get("fingerprint").asText().equals(fingerprint)) {
        other++;
        continue;
      }
      out.putIfAbsent(rec.get("key").asText(), rec);
    }
    if (repair && other > 0) {
      progress.accept(String.format(Locale.ROOT, "%s: %d records of another question, workload or settings are kept"
          + " but not used", points, other));
    }
    return out;
  }

  /**
   * Whether {@code rec} is a rate line of {@code points.jsonl} (one rate of a configuration, {@link
   * #rateByRate}): {@code fingerprint}, {@code rate_of} KEY, {@code rate_index} and {@code point}.
   */
  private static boolean isRateLine(JsonNode rec) {
    return rec != null && rec.isObject() && rec.path("rate_of").isTextual() && rec.path("fingerprint").isTextual()
        && rec.path("rate_index").canConvertToInt() && rec.path("rate_index").isIntegralNumber()
        && rec.path("point").isObject();
  }

  /** A JSON node on one line, decimals written plainly. */
  static String line(JsonNode n) {
    try {
      return WRITER.writeValueAsString(n);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /** {@code n} as indented JSON with a final line break (the form of summary.json). */
  public static String pretty(JsonNode n) {
    try {
      return PRETTY.writeValueAsString(n) + "\n";
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

}
