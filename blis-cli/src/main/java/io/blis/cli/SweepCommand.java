package io.blis.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.blis.cli.sweep.PriceTable;
import io.blis.cli.sweep.Sweep;
import io.blis.cli.sweep.SweepGrid;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code blis sweep}: runs a grid file's configurations ({@link SweepGrid}) in parallel and
 * resumably ({@link Sweep}), and writes the table, the Pareto frontier and the best configuration
 * to a directory.
 */
@Command(
    name = "sweep",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {"Capacity at an SLO (or metrics at fixed rates) for every configuration of a grid file, in parallel;"
        + " resumable; writes DIR/sweep.csv, DIR/sweep.jsonl, DIR/summary.json and DIR/report.html (charts)"
        + " (format: docs/capacity.md, Sweeps)."})
final class SweepCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(names = "--grid", required = true, paramLabel = "FILE",
      description = "Grid file (YAML): the question, the workload and the configurations.")
  Path grid;

  @Option(names = "--out", required = true, paramLabel = "DIR",
      description = "Output directory; a sweep killed before it finished continues from DIR/points.jsonl when rerun.")
  Path out;

  @Option(names = "--threads", paramLabel = "N",
      description = "Configurations simulated at once (default: the available processors, here ${DEFAULT-VALUE}).")
  int threads = Runtime.getRuntime().availableProcessors();

  @Option(names = "--prices", paramLabel = "FILE",
      description = "GPU prices, YAML 'GPU: USD per GPU-hour', replacing the bundled example prices GPU by GPU.")
  Path prices;

  @Option(names = "--quiet", description = "Print no line per finished configuration.")
  boolean quiet;

  @Override
  public Integer call() {
    if (threads < 1 || threads > 1024) {
      throw new ParameterException(spec.commandLine(), "--threads must be in [1, 1024], got " + threads);
    }
    if (out.toString().isBlank()) {
      // an empty path is the current directory: its files would be mixed with the sweep's
      throw new ParameterException(spec.commandLine(), "--out needs a directory name, got an empty one");
    }
    SweepGrid g = SweepGrid.load(Cli.requireFile("--grid", grid));
    PriceTable table = PriceTable.bundled();
    if (prices != null) {
      PriceTable mine = PriceTable.load(Cli.requireFile("--prices", prices));
      // a name that is no bundled GPU can only be the GPU of a GPU file in the grid: without one, a typo
      boolean gpuFiles = g.configs().stream().anyMatch(c -> io.blis.cli.sweep.SweepGrid.looksLikePath(c.gpu()));
      for (String name : mine.prices().keySet()) {
        if (!gpuFiles && io.blis.latency.catalog.GpuCatalog.lookup(name).isEmpty()) {
          throw new ParameterException(spec.commandLine(), "--prices " + prices + ": '" + name + "' is not a bundled"
              + " GPU, and the grid names no GPU file whose GPU it could be (a typo? bundled GPUs: "
              + String.join(", ", io.blis.latency.catalog.GpuCatalog.names()) + ")");
        }
      }
      table = table.overriddenBy(mine);
    }
    try {
      Files.createDirectories(out);
    } catch (java.nio.file.FileAlreadyExistsException e) {
      // a file, a device or a FIFO: a sweep writes a directory of files
      throw new IllegalArgumentException("--out " + out + ": exists and is not a directory (sweep writes a directory"
          + " of files: " + Sweep.POINTS + ", " + Sweep.CSV + ", ...)", e);
    } catch (IOException e) {
      throw new IllegalArgumentException("--out: cannot create the directory '" + out + "': "
          + io.blis.workload.TextFiles.reason(e), e);
    }
    if (Files.exists(out.resolve(Sweep.POINTS)) && !Files.isRegularFile(out.resolve(Sweep.POINTS))) {
      throw new IllegalArgumentException("--out: " + out.resolve(Sweep.POINTS) + " is not a file");
    }
    PrintWriter w = spec.commandLine().getOut();
    w.printf(Locale.ROOT, "%d configurations, question %s, %d threads%n", g.configs().size(), g.question().key(), threads);
    w.flush();
    Sweep.Outcome o = Sweep.of(g).threads(threads).prices(table).progress(line -> {
      if (!quiet) {
        synchronized (w) {
          w.println(line);
          w.flush();
        }
      }
    }).run(out);
    JsonNode s = o.table().summary();
    w.printf(Locale.ROOT, "%d configurations (%d from an earlier run, %d simulated now, %d skipped) in %.1f s%n",
        g.configs().size(), o.reused(), o.simulated(), s.path("skipped").asInt(), o.wallSeconds());
    JsonNode best = s.get("best");
    if (best == null || best.isNull()) {
      w.println("best: none (no configuration meets the SLO with a known price)");
    } else {
      w.printf(Locale.ROOT, "best: %s: %s req/s per USD-hour (%s req/s, %s USD/h, %s USD per million output tokens)%s%n",
          best.path("key").asText(), best.path("rps_per_usd_hour").asText(),
          g.question() == SweepGrid.Question.CAPACITY ? best.path("capacity_rps").asText() : best.path("achieved_rps").asText(),
          best.path("cost_per_hour_usd").asText(), best.path("usd_per_million_output_tokens").asText(),
          best.path("example_price").asBoolean() ? " [example price]" : "");
    }
    w.printf(Locale.ROOT, "Pareto frontier (%s vs req/s per USD-hour): %d configurations%n", g.paretoLatency(),
        s.path("pareto").size());
    if (s.path("example_prices_used").asBoolean()) {
      w.println("note: costs use the bundled EXAMPLE GPU prices (illustrative); give real ones with --prices FILE");
    }
    w.printf(Locale.ROOT, "wrote %s, %s, %s, %s%n", out.resolve(Sweep.CSV), out.resolve(Sweep.JSONL),
        out.resolve(Sweep.SUMMARY), out.resolve(Sweep.REPORT));
    w.flush();
    return 0;
  }
}
