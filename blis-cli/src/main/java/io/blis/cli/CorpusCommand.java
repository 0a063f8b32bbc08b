package io.blis.cli;

import io.blis.api.Coefficients;
import io.blis.engine.corpus.CorpusFiles;
import io.blis.engine.corpus.CorpusHalf;
import io.blis.engine.corpus.CorpusPoint;
import io.blis.engine.corpus.CorpusReplay;
import io.blis.engine.corpus.CorpusReport;
import io.blis.engine.corpus.CorpusRun;
import io.blis.engine.host.HostTimes;
import io.blis.engine.validate.Ensemble;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code blis corpus}: replays the corpus of published vLLM measurements
 * (docs/public-measurements) and prints each point's error, each source's and each half's.
 */
@Command(
    name = "corpus",
    mixinStandardHelpOptions = true,
    description = "Replays a corpus of published vLLM measurements (docs/public-measurements) and prints the"
        + " errors per point, per source and per half of the corpus.")
public final class CorpusCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(names = "--dir", paramLabel = "DIR", defaultValue = "docs/public-measurements",
      description = "The corpus folder (sources/ and models/ in it) (default: ${DEFAULT-VALUE}).")
  Path dir;

  @Option(names = "--half", paramLabel = "choosing|reporting|both", defaultValue = "both",
      description = "Which half of the corpus to replay (default: ${DEFAULT-VALUE}).")
  String half;

  @Option(names = "--source", paramLabel = "ID", description = "Replay only these sources (repeatable).")
  List<String> sources;

  @Option(names = "--coefficients", paramLabel = "FILE|INLINE",
      description = "Coefficient file or inline list (default: the latency model's bundled ones).")
  String coefficients;

  @Option(names = "--latency-model", defaultValue = "trained-physics", description = "Latency model (default: ${DEFAULT-VALUE}).")
  String latencyModel;

  @Option(names = "--seed", defaultValue = "42", description = "Seed of the replayed workloads (default: ${DEFAULT-VALUE}).")
  long seed;

  @Option(names = "--threads", paramLabel = "N", description = "Points replayed at once (default: the processors).")
  Integer threads;

  @Option(names = "--out", paramLabel = "FILE", description = "Write every point's result as JSON here.")
  Path out;

  @Option(names = "--api-server", paramLabel = "REQUEST_US:INPUT_TOKEN_US:CHUNK_US|none",
      description = "The API server's work per request taken in, per prompt token and per streamed chunk, served"
          + " one at a time in front of every served benchmark's engine (default: ${DEFAULT-VALUE}).",
      defaultValue = "none")
  String apiServer;

  @Option(names = "--host-times", paramLabel = "FILE|none",
      description = "The host time of each vLLM engine generation (default: the bundled table; none: no host time).")
  String hostTimes;

  @Option(names = "--check", description = "Only read every source file and list the problems of each (exit 1 when"
      + " there is one).")
  boolean check;

  @Mixin IntervalOptions intervalOptions = new IntervalOptions();

  @Override
  public Integer call() {
    CorpusHalf only = half.equals("both") ? null : parseHalf(half);
    if (out != null) {
      Cli.requireWritable("--out", out);
    }
    int n = threads == null ? Runtime.getRuntime().availableProcessors() : threads;
    if (n < 1) {
      throw new IllegalArgumentException("--threads must be at least 1, got " + n);
    }
    if (check) {
      List<String> problems = CorpusFiles.check(dir);
      problems.forEach(spec.commandLine().getErr()::println);
      spec.commandLine().getOut().println(problems.isEmpty() ? "every source file reads" : problems.size()
          + " source file(s) with a problem");
      return problems.isEmpty() ? 0 : 1;
    }
    List<CorpusFiles.Source> read = CorpusFiles.read(dir);
    if (sources != null) {
      for (String s : sources) {
        if (read.stream().noneMatch(x -> x.id().equals(s))) {
          throw new IllegalArgumentException("--source: no source '" + s + "' in " + dir.resolve("sources"));
        }
      }
    }
    List<CorpusPoint> points = read.stream()
        .filter(s -> only == null || s.half() == only)
        .filter(s -> sources == null || sources.contains(s.id()))
        .flatMap(s -> s.points().stream()).toList();
    Ensemble ensemble = intervalOptions.resolve(latencyModel);
    Coefficients c = ValidateCommand.loadCoefficients(coefficients);
    List<CorpusRun.PointResult> results = CorpusRun.run(points, new CorpusReplay(latencyModel, seed, hostTimes(), apiServer()), c, ensemble,
        intervalOptions.level, n);
    CorpusReport report = new CorpusReport(results,
        coefficients == null ? "bundled " + latencyModel + " defaults" : coefficients);
    spec.commandLine().getOut().print(report.table());
    if (out != null) {
      ValidateCommand.write(out, report.toJson());
    }
    return 0;
  }

  private io.blis.engine.frontend.ApiServer apiServer() {
    try {
      return io.blis.engine.frontend.ApiServer.parse(apiServer);
    } catch (IllegalArgumentException e) {
      throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--api-server: " + e.getMessage());
    }
  }

  private HostTimes hostTimes() {
    if (hostTimes == null) {
      return HostTimes.bundled();
    }
    return hostTimes.equals("none") ? null : HostTimes.load(Cli.requireFile("--host-times", Path.of(hostTimes)));
  }

  private static CorpusHalf parseHalf(String s) {
    try {
      return CorpusHalf.parse(s);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--half: expected choosing, reporting or both, got '" + s + "'");
    }
  }
}
