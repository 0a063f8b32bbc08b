package io.blis.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.blis.engine.cluster.PolicyBundle;
import io.blis.workload.RequestSource;
import io.blis.workload.RequestSpec;
import io.blis.workload.StrictYaml;
import io.blis.workload.TextFiles;
import io.blis.workload.inferenceperf.InferencePerfProfile;
import io.blis.workload.inferenceperf.InferencePerfProfiles;
import io.blis.workload.inferenceperf.ProfileWriter;
import io.blis.workload.spec.SpecWriter;
import io.blis.workload.spec.WorkloadFile;
import io.blis.workload.trace.NotedSource;
import io.blis.workload.trace.TokenArrayTraceReader;
import io.blis.workload.trace.TraceHeader;
import io.blis.workload.trace.TraceReader;
import io.blis.workload.trace.TraceV2Reader;
import io.blis.workload.trace.TraceWriter;
import io.blis.engine.result.OutputFiles;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code blis convert}: turns Go BLIS's files into this project's, which then load and simulate as
 * the Go BLIS file does when read directly: a workload spec (version 1 or 2) into this project's
 * spec (or, for an {@code inference_perf} block, an inference-perf config), a policy config into a
 * policy bundle, a TraceV2 pair or a trace CSV with token arrays into a BLIS trace (with the token
 * ids), and an inference-perf config into one with every default written out. The kind is told by
 * the content unless {@code --from} names it. Settings with no meaning here are printed as notes
 * and written as comments at the top of the output.
 */
@Command(
    name = "convert",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    subcommands = {ConvertCommand.Preset.class, ConvertCommand.InferencePerfSpec.class, ConvertCommand.ServeGen.class},
    description = "Convert Go BLIS's workload spec, policy config or traces (and inference-perf configs) into this"
        + " project's formats; the output loads and simulates as the input does. See docs/go-blis.md.")
final class ConvertCommand implements Callable<Integer> {

  /** What can be converted. */
  static final List<String> KINDS = List.of("workload-spec", "policy-config", "trace", "inference-perf");

  @Spec CommandSpec spec;

  @Parameters(index = "0", arity = "0..1", paramLabel = "FILE",
      description = "Go BLIS workload spec or policy config, TraceV2 header or data (PREFIX.yaml / PREFIX.csv), Go"
          + " BLIS trace CSV with token arrays, or an inference-perf config.")
  Path input;

  @Parameters(index = "1", arity = "0..1", paramLabel = "DATA_CSV",
      description = "The TraceV2 data when it is not PREFIX.csv beside the header.")
  Path data;

  @Option(names = "--from", paramLabel = "KIND",
      description = "What FILE is: workload-spec, policy-config, trace, inference-perf (default: told by the content).")
  String from;

  @Option(names = {"-o", "--out"}, paramLabel = "FILE",
      description = "Where to write the converted file (spec or bundle YAML, BLIS trace CSV; gzip when it ends in .gz).")
  Path out;

  @Option(names = "--seed", description = "Trace conversion: the seed of the token ids of a TraceV2's prompts,"
      + " recorded as the BLIS trace's token_seed (default: ${DEFAULT-VALUE}, as blis replay uses).")
  long seed = 42;

  @Override
  public Integer call() {
    CommandLine cl = spec.commandLine();
    DeploymentOptions.require(cl, input != null, "Missing required parameter: 'FILE' (or a Go BLIS form: convert preset,"
        + " convert inference-perf, convert servegen)");
    DeploymentOptions.require(cl, out != null, "Missing required option: '--out=FILE'");
    DeploymentOptions.require(cl, from == null || KINDS.contains(from),
        "--from must be one of " + String.join(", ", KINDS) + ", got '" + from + "'");
    Cli.requireFile("FILE", input);
    if (data != null) {
      Cli.requireFile("DATA_CSV", data);
    }
    Cli.requireWritable("--out", out);
    DeploymentOptions.require(cl, !out.toAbsolutePath().normalize().equals(input.toAbsolutePath().normalize()),
        "--out must not be the input file");
    String kind = from != null ? from : detect();
    DeploymentOptions.require(cl, data == null || kind.equals("trace"), "DATA_CSV goes with a TraceV2 header only");
    List<String> notes = new ArrayList<>();
    String what = switch (kind) {
      case "workload-spec" -> workloadSpec(notes);
      case "policy-config" -> policyConfig(notes);
      case "trace" -> trace(notes);
      default -> inferencePerf(notes);
    };
    Cli.printNotes(cl, notes);
    cl.getOut().println("wrote " + out + " (" + what + ")");
    return 0;
  }

  /** The kind of {@link #input}, told by its content. */
  private String detect() {
    if (TraceReader.isBlisTrace(input)) {
      throw new IllegalArgumentException(input + ": already a BLIS trace; nothing to convert");
    }
    if (TraceV2Reader.isHeader(input) || TraceV2Reader.isData(input) || TokenArrayTraceReader.isTokenArrayTrace(input)) {
      return "trace";
    }
    String text = TextFiles.readConfig(input);
    JsonNode root = StrictYaml.parse(text, input.toString(), JsonNode.class);
    if (root.isObject()) {
      if (root.has("routing") || root.has("router") || root.has("pools") || root.has("scheduler")
          || root.has("node_pools") || root.has("autoscaler") || root.has("instance_lifecycle")
          || (root.has("admission") && !root.has("data"))) {
        return "policy-config";
      }
      if (root.has("inference_perf") || (root.has("data") && root.has("load"))) {
        return "inference-perf";
      }
      if (root.has("clients") || root.has("cohorts") || root.has("version")) {
        return "workload-spec";
      }
    }
    throw new IllegalArgumentException(input + ": not a file blis convert knows: expected a Go BLIS workload spec"
        + " (clients, cohorts or inference_perf), policy config (routing, admission, ...), TraceV2 or trace CSV, or an"
        + " inference-perf config (data, load); name it with --from");
  }

  private List<String> header(String what, List<String> notes) {
    List<String> h = new ArrayList<>();
    h.add("Converted by blis convert from " + input.getFileName() + " (" + what + "); see docs/go-blis.md.");
    for (String n : notes) {
      h.add("note: " + n);
    }
    return h;
  }

  private String workloadSpec(List<String> notes) {
    WorkloadFile f = WorkloadFile.load(input);
    if (f.format() == WorkloadFile.Format.BLIS) {
      throw new IllegalArgumentException(input + ": already in this project's workload spec format; nothing to convert");
    }
    notes.addAll(f.notes());
    String what = "Go BLIS workload spec, version " + f.goVersion();
    if (f.spec() != null) {
      io.blis.workload.spec.WorkloadSpec spec = f.spec();
      if (spec.maxRequests() != Long.MAX_VALUE && spec.clients().stream().anyMatch(c -> c.session().multiTurn())) {
        // Go BLIS's num_requests counts every round of a session; this project's counts sessions
        long sent = 0;
        try (io.blis.workload.RequestSource s = f.source(f.seed())) {
          while (s.next() != null) {
            sent++;
          }
        }
        notes.add("num_requests " + spec.maxRequests() + " counts every round of a multi-turn session in Go BLIS's"
            + " spec; this spec counts sessions and single requests: " + sent + ", the ones Go BLIS's count lets start");
        spec = new io.blis.workload.spec.WorkloadSpec(spec.seed(), spec.clients(), sent, spec.horizonUs());
      }
      Cli.write("--out", out, SpecWriter.toYaml(spec, header(what, notes)));
      return "this project's workload spec: " + f.spec().clients().size() + " client(s); load it with --workload-spec";
    }
    return writeProfile(f.inferencePerf(), what + ", inference_perf block", notes, f.seed());
  }

  private String inferencePerf(List<String> notes) {
    String text = TextFiles.readConfig(input);
    JsonNode root = StrictYaml.parse(text, input.toString(), JsonNode.class);
    if (root.isObject() && (root.has("inference_perf") || root.has("clients") || root.has("version"))) {
      return workloadSpec(notes);
    }
    return writeProfile(InferencePerfProfiles.load(input), "inference-perf config", notes, null);
  }

  private String writeProfile(InferencePerfProfile p, String what, List<String> notes, Long specSeed) {
    List<String> h = header(what, notes);
    if (specSeed != null) {
      h.add("The spec's seed was " + specSeed + ": run with --seed " + specSeed + " to simulate as the spec does.");
    }
    Cli.write("--out", out, ProfileWriter.toYaml(p, h));
    return "inference-perf config; load it with --inference-perf" + (specSeed != null ? " --seed " + specSeed : "");
  }

  private String policyConfig(List<String> notes) {
    PolicyBundle.Read r = PolicyBundle.read(input);
    if (!r.goBlis()) {
      throw new IllegalArgumentException(input + ": already in this project's policy bundle format; nothing to convert");
    }
    notes.addAll(r.notes());
    if (r.autoscaling() != null) {
      notes.add("The autoscaling sections (autoscaler, node_pools, instance_lifecycle) are not part of a policy"
          + " bundle; give them as flags: " + autoscalingFlags(r.autoscaling()));
    }
    Cli.write("--out", out, StrictYaml.comments(header("Go BLIS policy config", notes)) + r.bundle().toYaml());
    return r.bundle().equals(PolicyBundle.empty())
        ? "policy bundle with nothing but comments: the file sets only autoscaling; give the flags its header names"
        : "policy bundle; load it with --policy-config";
  }

  /** The flags that carry a Go BLIS policy config's autoscaling settings. */
  static String autoscalingFlags(io.blis.engine.cluster.GoAutoscaling g) {
    if (!g.enabled()) {
      return "none (its interval_us is 0: no autoscaler)";
    }
    StringBuilder f = new StringBuilder("--autoscaler wva");
    g.analyzer().forEach((k, v) -> f.append(" --autoscaler-option ").append(k).append('=').append(v));
    f.append(" --model-autoscaler-interval-us ").append(g.intervalUs());
    f.append(" --scale-up-window-s ").append(g.scaleUpWindowUs() / 1e6);
    f.append(" --scale-down-window-s ").append(g.scaleDownWindowUs() / 1e6);
    java.util.function.BiConsumer<String, Object> given = (flag, value) -> {
      if (value != null) {
        f.append(' ').append(flag).append(' ').append(value);
      }
    };
    given.accept("--gpus-per-node", g.gpusPerNode());
    given.accept("--max-nodes", g.maxNodes());
    given.accept("--provisioning-delay-s", g.provisioningUs() == null ? null : g.provisioningUs() / 1e6);
    given.accept("--loading-delay-s", g.loadingUs() == null ? null : g.loadingUs() / 1e6);
    given.accept("--node-cost-per-hour", g.costPerHour());
    given.accept("--initial-nodes", g.initialNodes());
    given.accept("--min-nodes", g.minNodes());
    return f.toString();
  }

  private String trace(List<String> notes) {
    NotedSource s;
    String what;
    // a TraceV2's prompts are generated in the form a trace without token ids rebuilds exactly
    // (about 30 times smaller); a token-array trace's ids are real and written out
    boolean ids = TokenArrayTraceReader.isTokenArrayTrace(input);
    boolean adapters = false;
    if (ids) {
      s = TokenArrayTraceReader.open(input);
      what = "Go BLIS trace CSV with token arrays";
    } else {
      Path[] pair = data != null ? new Path[] {input, data} : TraceV2Reader.pair(input);
      s = TraceV2Reader.open(pair[0], pair[1], seed);
      adapters = TraceV2Reader.hasAdapterColumn(pair[1]);
      what = "Go BLIS TraceV2 " + pair[0].getFileName() + " + " + pair[1].getFileName();
    }
    notes.addAll(s.notes());
    Path tmp = OutputFiles.temporary(Cli.parentsCreated("--out", out));
    long rows = 0;
    TraceHeader th = TraceHeader.of(seed, ids, BlisCli.oneLine(String.join(" ", header(what, notes))));
    try (RequestSource source = s.source(); TraceWriter w = TraceWriter.create(OutputFiles.open(tmp), th, out.getFileName().toString().endsWith(".gz"), false, adapters);
        TerminalProgress progress = TerminalProgress.of("blis convert", spec.commandLine().getErr())) {
      RequestSpec r;
      while ((r = source.next()) != null) {
        w.write(r);
        rows++;
        if (progress.due()) {
          long n = rows;
          progress.update(() -> String.format(java.util.Locale.ROOT, "%,d requests written to %s", n, out));
        }
      }
    } catch (RuntimeException e) {
      OutputFiles.discard(tmp);
      throw e;
    } catch (java.io.IOException e) {
      OutputFiles.discard(tmp);
      throw new java.io.UncheckedIOException("--out: cannot write " + out + ": " + e.getMessage(), e);
    }
    Cli.commit("--out", tmp, out);
    return "BLIS trace of " + rows + " requests" + (ids ? " with their token ids" : "")
        + "; replay it with blis replay --trace";
  }

  /** Writes {@code yaml} to {@code out}, or to stdout when none is given (as Go BLIS prints it). */
  static void emit(CommandLine cl, Path out, String yaml, String what) {
    if (out == null) {
      cl.getOut().print(yaml);
      cl.getOut().flush();
    } else {
      Cli.requireWritable("--out", out);
      Cli.write("--out", out, yaml);
      cl.getOut().println("wrote " + out + " (" + what + ")");
    }
  }

  /** Go BLIS's {@code blis convert preset}: a named preset as a workload spec, on stdout. */
  @Command(name = "preset", mixinStandardHelpOptions = true,
      description = "Go BLIS: a named workload preset (chatbot, summarization, contentgen, multidoc) at --rate as a"
          + " workload spec, printed (or written to --out); load it with --workload-spec.")
  static final class Preset implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(names = "--name", required = true, paramLabel = "PRESET", description = "The preset's name.")
    String name;

    @Option(names = "--rate", required = true, paramLabel = "R", description = "Requests per second.")
    double rate;

    @Option(names = "--num-requests", required = true, paramLabel = "N", description = "Requests of the spec.")
    long numRequests;

    @Option(names = "--seed", description = "The spec's seed (default: ${DEFAULT-VALUE}, blis run's).")
    long seed = 42;

    @Option(names = "--defaults-filepath", paramLabel = "FILE", hidden = true,
        description = "Go BLIS: its defaults.yaml; the presets here are built in (noted when given).")
    Path defaults;

    @Option(names = {"-o", "--out"}, paramLabel = "FILE", description = "Write the spec here instead of printing it.")
    Path out;

    @Override
    public Integer call() {
      CommandLine cl = spec.commandLine();
      DeploymentOptions.require(cl, rate > 0 && Double.isFinite(rate), "--rate must be a finite value > 0, got " + rate);
      DeploymentOptions.require(cl, numRequests > 0, "--num-requests must be > 0, got " + numRequests);
      DeploymentOptions.require(cl, io.blis.workload.spec.WorkloadSpec.presetNames().contains(name),
          "--name: unknown preset '" + name + "', expected one of " + io.blis.workload.spec.WorkloadSpec.presetNames());
      if (defaults != null) {
        Cli.printNotes(cl, List.of("--defaults-filepath: the presets are built in (the lengths of Go BLIS's"
            + " defaults.yaml); the file is not read"));
      }
      String yaml = SpecWriter.toYaml(io.blis.workload.spec.WorkloadSpec.preset(name, rate, numRequests, seed),
          List.of("The " + name + " preset at " + rate + " req/s, " + numRequests + " requests (blis convert preset)."));
      emit(cl, out, yaml, "this project's workload spec; load it with --workload-spec");
      return 0;
    }
  }

  /** Go BLIS's {@code blis convert inference-perf --spec F}: a spec with an inference_perf section. */
  @Command(name = "inference-perf", mixinStandardHelpOptions = true,
      description = "Go BLIS: a workload spec with an inference_perf section as a spec --workload-spec loads, printed (or"
          + " written to --out). Its section is expanded into stages and clients when the spec is loaded.")
  static final class InferencePerfSpec implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(names = "--spec", required = true, paramLabel = "FILE", description = "The spec with an inference_perf section.")
    Path file;

    @Option(names = {"-o", "--out"}, paramLabel = "FILE", description = "Write the spec here instead of printing it.")
    Path out;

    @Override
    public Integer call() {
      CommandLine cl = spec.commandLine();
      Cli.requireFile("--spec", file);
      WorkloadFile f = WorkloadFile.load(file);
      DeploymentOptions.require(cl, f.inferencePerf() != null,
          "--spec: file " + file + " does not contain an inference_perf section");
      Cli.printNotes(cl, f.notes());
      String text = TextFiles.readConfig(file);
      String yaml = StrictYaml.comments(List.of("Converted from " + file.getFileName() + " (blis convert inference-perf):"
          + " its inference_perf section is expanded into stages and clients when --workload-spec loads it.")) + text
          + (text.endsWith("\n") ? "" : "\n");
      emit(cl, out, yaml, "a workload spec with an inference_perf section; load it with --workload-spec");
      return 0;
    }
  }

  /** Go BLIS's {@code blis convert servegen}: a ServeGen data folder as a spec of cohorts, on stdout. */
  @Command(name = "servegen", mixinStandardHelpOptions = true,
      description = "Go BLIS: a ServeGen data folder (chunk-N-trace.csv, chunk-N-dataset.json) as a Go BLIS spec of"
          + " cohorts, printed (or written to --out): three periods of the day (midnight, morning, afternoon) by"
          + " five SLO classes; reasoning data as five cohorts of its busiest window. Load it with --workload-spec.")
  static final class ServeGen implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(names = "--path", required = true, paramLabel = "DIR", description = "The ServeGen data folder of one model.")
    Path path;

    @Option(names = "--window-duration-seconds", paramLabel = "S",
        description = "Seconds each period is played (default: ${DEFAULT-VALUE}).")
    int window = io.blis.workload.spec.ServeGenData.DEFAULT_WINDOW_S;

    @Option(names = "--drain-timeout-seconds", paramLabel = "S",
        description = "Seconds between periods, without arrivals (default: ${DEFAULT-VALUE}).")
    int drain = io.blis.workload.spec.ServeGenData.DEFAULT_DRAIN_S;

    @Option(names = "--time", paramLabel = "PERIOD",
        description = "Keep one period's cohorts: midnight, morning or afternoon (not for reasoning data).")
    String time;

    @Option(names = "--seed", description = "The spec's seed, which draws each period's window and deals the chunks"
        + " to classes (default: ${DEFAULT-VALUE}, Go BLIS's).")
    long seed = io.blis.workload.spec.ServeGenData.CONVERT_SEED;

    @Option(names = {"-o", "--out"}, paramLabel = "FILE", description = "Write the spec here instead of printing it.")
    Path out;

    @Override
    public Integer call() {
      CommandLine cl = spec.commandLine();
      DeploymentOptions.require(cl, window > 0, "--window-duration-seconds must be > 0, got " + window);
      DeploymentOptions.require(cl, drain >= 0, "--drain-timeout-seconds must be >= 0, got " + drain);
      DeploymentOptions.require(cl, time == null || io.blis.workload.spec.ServeGenData.PERIODS.contains(time),
          "--time must be one of " + io.blis.workload.spec.ServeGenData.PERIODS + ", got '" + time + "'");
      DeploymentOptions.require(cl, java.nio.file.Files.isDirectory(path),
          "--path: " + path + " does not exist or is not a folder (expected ServeGen's chunk-N-trace.csv and"
              + " chunk-N-dataset.json files of one model)");
      String yaml;
      try {
        yaml = io.blis.workload.spec.ServeGenData.toYaml(path, window, drain, seed, time,
            List.of("The ServeGen data in " + path + " as cohorts (blis convert servegen, seed " + seed + ");"
                + " give num_requests or horizon (microseconds) before running it."), null, null);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(cl, "--path: " + e.getMessage());
      }
      emit(cl, out, yaml, "a Go BLIS workload spec of cohorts; load it with --workload-spec");
      return 0;
    }
  }
}
