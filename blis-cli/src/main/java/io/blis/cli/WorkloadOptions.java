package io.blis.cli;

import io.blis.engine.capacity.SloSet;
import io.blis.workload.RequestSource;
import io.blis.workload.inferenceperf.InferencePerfProfiles;
import io.blis.workload.inferenceperf.InferencePerfWorkload;
import io.blis.workload.spec.WorkloadFile;
import io.blis.workload.spec.WorkloadSpec;
import io.blis.workload.trace.NotedSource;
import io.blis.workload.trace.TokenArrayTraceReader;
import io.blis.workload.synthetic.AdapterPopularity;
import io.blis.workload.synthetic.LengthSpec;
import io.blis.workload.RequestSpec;
import io.blis.workload.synthetic.SessionSpec;
import io.blis.workload.synthetic.SyntheticWorkload;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The workload flags shared by the commands that generate requests ({@code blis run}, {@code blis
 * observe}): the default Poisson/Gaussian workload, a workload spec, a preset or an inference-perf
 * profile, at most one of them.
 */
final class WorkloadOptions {

  // ---- default synthetic workload: Poisson arrivals, Gaussian lengths ----

  @Option(names = "--rate", description = "Mean arrival rate, requests per second (default: ${DEFAULT-VALUE},"
      + " as Go BLIS's).")
  double rate = 1.0;

  @Option(names = "--concurrency", paramLabel = "N",
      description = "Closed-loop users instead of --rate (Go BLIS's flag; a benchmark's concurrency): each sends"
          + " its next request --think-time-ms after its previous one completed, the first ones staggered over"
          + " the think time; --num-requests counts every request.")
  Integer concurrency;

  @Option(names = "--think-time-ms", paramLabel = "MS",
      description = "With --concurrency: each user's pause between a response and its next request, ms (default: 0).")
  Long thinkTimeMs;

  @Option(names = {"--num-requests", "--max-prompts"}, description = "Number of requests (default: ${DEFAULT-VALUE};"
      + " --max-prompts is Go BLIS's name).")
  long numRequests = 100;

  @Option(names = "--seed", description = "Random seed of the workload (default: ${DEFAULT-VALUE}).")
  long seed = 42;

  @Option(names = "--prompt-tokens", description = "Mean prompt length (default: ${DEFAULT-VALUE}).")
  double promptTokens = 512;

  @Option(names = "--prompt-tokens-stdev", description = "Prompt length standard deviation (default: ${DEFAULT-VALUE}).")
  double promptTokensStdev = 256;

  @Option(names = "--prompt-tokens-min", description = "Shortest prompt (default: ${DEFAULT-VALUE}).")
  int promptTokensMin = 2;

  @Option(names = "--prompt-tokens-max", description = "Longest prompt (default: ${DEFAULT-VALUE}).")
  int promptTokensMax = 7000;

  @Option(names = "--output-tokens", description = "Mean output length (default: ${DEFAULT-VALUE}).")
  double outputTokens = 512;

  @Option(names = "--output-tokens-stdev", description = "Output length standard deviation (default: ${DEFAULT-VALUE}).")
  double outputTokensStdev = 256;

  @Option(names = "--output-tokens-min", description = "Shortest output (default: ${DEFAULT-VALUE}).")
  int outputTokensMin = 2;

  @Option(names = "--output-tokens-max", description = "Longest output (default: ${DEFAULT-VALUE}).")
  int outputTokensMax = 7000;

  @Option(names = "--prefix-tokens",
      description = "Tokens of a prefix shared by every prompt (default: ${DEFAULT-VALUE}).")
  int prefixTokens = 0;

  @Option(names = "--lora-adapters", paramLabel = "N",
      description = "LoRA adapters the requests name, adapter-0 to adapter-(N-1), one drawn for each request by"
          + " --lora-zipf popularity (default: ${DEFAULT-VALUE}: every request names the base model).")
  int loraAdapters = 0;

  @Option(names = "--lora-zipf", paramLabel = "S",
      description = "With --lora-adapters: popularity exponent, adapter-k named with probability proportional to"
          + " 1/(k+1)^S; 0 makes every adapter equally popular (default: ${DEFAULT-VALUE}).")
  double loraZipf = AdapterPopularity.DEFAULT_ZIPF;

  @Option(names = "--lora-base-share", paramLabel = "F",
      description = "With --lora-adapters: share of the requests that name no adapter (default: ${DEFAULT-VALUE}).")
  double loraBaseShare = 0;

  // ---- other workload kinds (at most one) ----

  @Option(names = "--workload-spec", paramLabel = "FILE",
      description = "YAML workload spec (clients, arrivals, lengths, sessions), this project's or Go BLIS's (version 1"
          + " or 2, cohorts, inference_perf); its seed is used unless --seed is given.")
  Path workloadSpec;

  @Option(names = "--workload", paramLabel = "NAME",
      description = "Preset workload at --rate with --num-requests: chatbot, summarization, contentgen, multidoc;"
          + " distribution is the default Poisson/Gaussian workload of the --prompt-tokens and --output-tokens flags;"
          + " traces replays --workload-traces-filepath (Go BLIS's names).")
  String workloadPreset;

  @Option(names = "--workload-traces-filepath", paramLabel = "FILE",
      description = "With --workload traces: Go BLIS's request CSV (arrival_time in seconds, request_id, model,"
          + " prefill_tokens and decode_tokens as JSON arrays of token ids).")
  Path tracesFile;

  /** Go BLIS's name of the workload read from --workload-traces-filepath. */
  static final String TRACES = "traces";

  /** The workload spec file, read once (its notes are printed on first use). */
  private WorkloadFile specFile;
  /** --num-requests given with a Go BLIS spec, which it bounds as in Go BLIS; else 0. */
  private long specNumRequests;
  private boolean notesPrinted;
  /** Whether --workload traces was given (validate() then clears the preset name). */
  private boolean tracesChosen;

  /** The workload the flags select, in words, for the log. */
  String describe(long seed) {
    if (tracesFile != null) {
      return "Go BLIS trace CSV " + tracesFile + " (its arrival times and token ids)";
    }
    if (workloadSpec != null) {
      return "workload spec " + workloadSpec + " (its rate and number of requests), seed " + seed;
    }
    if (inferencePerf != null) {
      return "inference-perf profile " + inferencePerf + ", seed " + seed;
    }
    String what = workloadPreset != null ? "preset " + workloadPreset
        : String.format(java.util.Locale.ROOT, (concurrency != null ? concurrency + " closed-loop users" : "Poisson arrivals")
            + ", prompts %s +- %s tokens, outputs %s +- %s tokens%s",
            SloSet.trim(promptTokens), SloSet.trim(promptTokensStdev), SloSet.trim(outputTokens),
            SloSet.trim(outputTokensStdev),
            prefixTokens > 0 ? ", a shared prefix of " + prefixTokens + " tokens" : "")
            + (loraAdapters > 0 ? ", " + lora() : "");
    return String.format(java.util.Locale.ROOT, "%s: %d requests at %s req/s, seed %d", what, numRequests, SloSet.trim(rate), seed);
  }

  /** Go BLIS's name of the default workload: the flags' Poisson arrivals and Gaussian lengths. */
  static final String DISTRIBUTION = "distribution";

  @Option(names = "--inference-perf", paramLabel = "FILE",
      description = "inference-perf profile (YAML/JSON, shared_prefix data): regenerate the stream inference-perf sent.")
  Path inferencePerf;

  /**
   * Longest expected span of the generated arrivals ({@code --num-requests / --rate}): the
   * simulated-time limit, seconds. With many requests the last arrival lands close to it; the
   * engine refuses any arrival beyond the limit.
   */
  static final long MAX_ARRIVAL_SPAN_S = io.blis.engine.Simulation.MAX_SIMULATED_TIME_US / 1_000_000;

  /** Flags of the default synthetic workload, refused together with another workload kind. */
  private static final List<String> SYNTHETIC_FLAGS = List.of("--prompt-tokens",
      "--prompt-tokens-stdev", "--prompt-tokens-min", "--prompt-tokens-max", "--output-tokens",
      "--output-tokens-stdev", "--output-tokens-min", "--output-tokens-max", "--prefix-tokens", "--concurrency",
      "--think-time-ms");

  /** The LoRA flags of the default synthetic workload, refused together with another workload kind. */
  private static final List<String> LORA_FLAGS = List.of("--lora-adapters", "--lora-zipf", "--lora-base-share");

  /**
   * Checks the values and the selection: at most one workload kind (counting {@code otherKinds},
   * the command's own workload flags that were given), and no flag the chosen kind would ignore.
   */
  void validate(CommandLine cl, List<String> otherKinds) {
    if (DISTRIBUTION.equals(workloadPreset)) {
      workloadPreset = null;
    }
    if (TRACES.equals(workloadPreset)) {
      tracesChosen = true;
      workloadPreset = null;
    }
    require(cl, tracesChosen == (tracesFile != null), tracesChosen
        ? "--workload traces needs --workload-traces-filepath FILE (Go BLIS's trace CSV)"
        : "--workload-traces-filepath goes with --workload traces");
    boolean traces = tracesChosen;
    require(cl, Double.isFinite(rate) && rate > 0, "--rate must be a positive number of requests per second, got " + rate);
    require(cl, concurrency == null || (concurrency >= 1 && concurrency <= SessionSpec.MAX_USERS),
        "--concurrency must be in [1, " + SessionSpec.MAX_USERS + "] users, got " + concurrency);
    require(cl, concurrency == null || !cl.getParseResult().hasMatchedOption("--rate"),
        "--concurrency and --rate exclude each other: closed-loop users send as fast as their requests complete");
    require(cl, thinkTimeMs == null || concurrency != null, "--think-time-ms goes with --concurrency");
    require(cl, concurrency == null || loraAdapters == 0, "--lora-adapters goes with --rate's workload, not --concurrency");
    require(cl, thinkTimeMs == null || (thinkTimeMs >= 0 && thinkTimeMs <= RequestSpec.MAX_TIME_US / 1000),
        "--think-time-ms must be in [0, " + RequestSpec.MAX_TIME_US / 1000 + "], got " + thinkTimeMs);
    require(cl, numRequests >= 1, "--num-requests must be at least 1 (a run of no requests measures nothing), got " + numRequests);
    if (workloadSpec == null && inferencePerf == null && !traces && numRequests > 0 && concurrency == null
        && !horizonCuts(cl)) {
      // the arrivals' expected span must fit in the simulated time, unless the horizon stops them first
      double spanS = numRequests / rate;
      require(cl, spanS <= MAX_ARRIVAL_SPAN_S, String.format(java.util.Locale.ROOT,
          "--rate %s req/s spreads --num-requests %d over %.3g s on average, beyond the simulated-time limit"
              + " of %d s (365 days); give --rate at least %.3g",
          rate, numRequests, spanS, MAX_ARRIVAL_SPAN_S, numRequests / (double) MAX_ARRIVAL_SPAN_S));
    }
    require(cl, prefixTokens >= 0, "--prefix-tokens must be >= 0, got " + prefixTokens);
    require(cl, promptTokensMin >= 1 && promptTokensMin <= promptTokensMax,
        "--prompt-tokens-min must be >= 1 and <= --prompt-tokens-max, got " + promptTokensMin + " and " + promptTokensMax);
    require(cl, outputTokensMin >= 1 && outputTokensMin <= outputTokensMax,
        "--output-tokens-min must be >= 1 and <= --output-tokens-max, got " + outputTokensMin + " and " + outputTokensMax);
    require(cl, promptTokensStdev >= 0 && outputTokensStdev >= 0, "length standard deviations must be >= 0");
    require(cl, loraAdapters >= 0 && loraAdapters <= AdapterPopularity.MAX_ADAPTERS, "--lora-adapters must be"
        + " in [0, " + AdapterPopularity.MAX_ADAPTERS + "] (0: the requests name no adapter), got " + loraAdapters);
    require(cl, loraZipf >= 0 && Double.isFinite(loraZipf),
        "--lora-zipf must be a finite number >= 0 (0: every adapter equally popular), got " + loraZipf);
    require(cl, loraBaseShare >= 0 && loraBaseShare <= 1,
        "--lora-base-share must be in [0, 1] (the share of the requests that name no adapter), got " + loraBaseShare);
    if (!"run".equals(cl.getCommandName())) {
      for (String flag : LORA_FLAGS) {
        require(cl, !cl.getParseResult().hasMatchedOption(flag), flag + " applies to blis run only (blis "
            + cl.getCommandName() + " builds its requests without LoRA adapters)");
      }
    }
    List<String> kinds = new ArrayList<>(otherKinds);
    if (workloadSpec != null) {
      kinds.add("--workload-spec");
    }
    if (workloadPreset != null) {
      kinds.add("--workload");
    }
    if (inferencePerf != null) {
      kinds.add("--inference-perf");
    }
    if (traces) {
      kinds.add("--workload traces");
    }
    require(cl, kinds.size() <= 1, "give at most one workload kind (" + String.join(", ", allKinds(otherKinds))
        + "), got " + String.join(" and ", kinds));
    if (kinds.isEmpty()) {
      for (String flag : List.of("--lora-zipf", "--lora-base-share")) {
        require(cl, loraAdapters > 0 || !cl.getParseResult().hasMatchedOption(flag),
            flag + " goes with --lora-adapters N (it shapes the popularity of the N adapters the requests name)");
      }
      return;
    }
    String kind = kinds.get(0);
    List<String> ignored = new ArrayList<>(SYNTHETIC_FLAGS);
    if (workloadPreset == null) {
      ignored.add("--rate");
      ignored.add("--num-requests");
    }
    if (workloadSpec != null && cl.getParseResult().hasMatchedOption("--num-requests")) {
      Cli.requireFile("--workload-spec", workloadSpec);
      if (WorkloadFile.detect(io.blis.workload.TextFiles.readConfig(workloadSpec), workloadSpec.toString())
          == WorkloadFile.Format.GO_BLIS) {
        // Go BLIS: --num-requests sets a spec's num_requests
        ignored.remove("--num-requests");
        specNumRequests = numRequests;
      }
    }
    for (String flag : ignored) {
      require(cl, !cl.getParseResult().hasMatchedOption(flag),
          flag + " does not apply to " + kind + (workloadPreset == null
              ? " (the file defines the rate, lengths and number of requests; --num-requests sets a Go BLIS"
                  + " spec's num_requests)"
              : " (the preset defines the lengths; --rate and --num-requests apply)"));
    }
    for (String flag : LORA_FLAGS) {
      require(cl, !cl.getParseResult().hasMatchedOption(flag), flag + " does not apply to " + kind
          + (workloadSpec != null
              ? " (the spec's clients name their adapters: adapter: NAME, or adapters: {count: N, zipf: S,"
                  + " base_share: F})"
              : " (the LoRA flags draw adapters for the default workload of --rate and --prompt-tokens only)"));
    }
    if (workloadSpec != null) {
      Cli.requireFile("--workload-spec", workloadSpec);
      if (specFile().spec() != null) { // a Go BLIS spec of other arrival kinds has no spec of ours
        requireSpecWithinLimits(cl, specFile().spec());
      }
    }
    if (inferencePerf != null) {
      Cli.requireFile("--inference-perf", inferencePerf);
    }
    if (tracesFile != null) {
      Cli.requireFile("--workload-traces-filepath", tracesFile);
    }
  }

  /**
   * Whether the command's {@code --horizon-s} or {@code --horizon} (already checked: at most the
   * simulated-time limit) stops the run before the limit: then it bounds the arrivals, whatever
   * {@code --num-requests / --rate} would be, as a spec's horizon_s does.
   */
  private static boolean horizonCuts(CommandLine cl) {
    CommandLine.ParseResult pr = cl.getParseResult();
    long limitUs = io.blis.engine.Simulation.MAX_SIMULATED_TIME_US;
    Double seconds = pr.hasMatchedOption("--horizon-s") ? pr.matchedOptionValue("--horizon-s", (Double) null) : null;
    Long us = pr.hasMatchedOption("--horizon") ? pr.matchedOptionValue("--horizon", (Long) null) : null;
    return seconds != null && seconds >= 0 && seconds * 1e6 < limitUs || us != null && us >= 0 && us < limitUs;
  }

  /**
   * The bound the flags have, for a spec file too: its number of requests spread at its clients'
   * total rate within the simulated-time limit, when no horizon cuts the arrivals first (its
   * horizon_s is held to the same limit where the file is read).
   */
  private void requireSpecWithinLimits(CommandLine cl, io.blis.workload.spec.WorkloadSpec spec) {
    long limitUs = io.blis.engine.Simulation.MAX_SIMULATED_TIME_US; // horizon_s itself: checked by the spec's reader
    double rate = spec.clients().stream().mapToDouble(c -> c.arrival().rateRps()).sum();
    boolean horizonCuts = spec.horizonUs() > 0 && spec.horizonUs() < limitUs;
    if (spec.maxRequests() > 0 && !horizonCuts && rate > 0 && Double.isFinite(rate)) {
      double spanS = spec.maxRequests() / rate;
      require(cl, spanS <= MAX_ARRIVAL_SPAN_S, String.format(java.util.Locale.ROOT,
          "--workload-spec %s: num_requests %d at its clients' %.6g req/s spread over %.3g s on average, beyond the"
              + " simulated-time limit of %d s (365 days), as with --num-requests and --rate; set horizon_s or fewer"
              + " requests", workloadSpec, spec.maxRequests(), rate, spanS, MAX_ARRIVAL_SPAN_S));
    }
  }

  /** The --workload-spec file in whichever format it is written, read once. */
  private WorkloadFile specFile() {
    if (specFile == null) {
      specFile = WorkloadFile.load(workloadSpec, specNumRequests);
    }
    return specFile;
  }

  /** Prints {@code notes} to the command's stderr the first time any are shown. */
  private void printNotes(CommandLine cl, List<String> notes) {
    if (!notesPrinted) {
      notesPrinted = true;
      Cli.printNotes(cl, notes);
    }
  }

  private static List<String> allKinds(List<String> otherKinds) {
    List<String> all = new ArrayList<>(List.of("--workload-spec", "--workload", "--inference-perf",
        "--workload traces"));
    for (String k : otherKinds) {
      if (!all.contains(k)) {
        all.add(k);
      }
    }
    return all;
  }

  private static void require(CommandLine cl, boolean ok, String message) {
    DeploymentOptions.require(cl, ok, message);
  }

  /**
   * Whether the workload's requests may name models (a workload spec with a client's {@code
   * model}, or a trace with a model column): its trace then gets a model column.
   */
  boolean namesModels() {
    return workloadSpec != null && specFile().spec() != null
        && specFile().spec().clients().stream().anyMatch(c -> !c.model().isEmpty());
  }

  /**
   * Whether the workload's requests may name LoRA adapters (--lora-adapters, or a workload spec
   * with a client's {@code adapter} or {@code adapters}): its trace then gets an adapter column.
   */
  boolean namesAdapters() {
    if (workloadSpec != null) {
      return specFile().spec() != null && specFile().spec().clients().stream()
          .anyMatch(c -> !c.adapter().isEmpty() || !c.adapters().isNone());
    }
    return loraAdapters > 0; // validate() allows it with the default workload only
  }

  /** The adapters --lora-adapters, --lora-zipf and --lora-base-share name. */
  private AdapterPopularity loraPopularity() {
    return loraAdapters == 0 ? AdapterPopularity.NONE : AdapterPopularity.numbered(
        AdapterPopularity.DEFAULT_PREFIX, loraAdapters, loraZipf, loraBaseShare);
  }

  /** The LoRA flags in words. */
  private String lora() {
    return String.format(java.util.Locale.ROOT, "%d LoRA adapters (Zipf %s%s)", loraAdapters, SloSet.trim(loraZipf),
        loraBaseShare > 0 ? ", base model share " + SloSet.trim(loraBaseShare) : "");
  }

  /** --seed when given; for a workload spec without --seed, the spec's own seed. */
  long effectiveSeed(CommandLine cl) {
    if (workloadSpec != null && !cl.getParseResult().hasMatchedOption("--seed")) {
      return specFile().seed();
    }
    return seed;
  }

  /**
   * The number of requests the workload sends when the flags say it (--num-requests of the
   * synthetic workloads and the presets); -1 when a file says it (a workload spec, a trace, an
   * inference-perf profile). After {@link #validate}.
   */
  long flagRequests() {
    return workloadSpec == null && tracesFile == null && inferencePerf == null ? numRequests : -1;
  }

  /** A fresh source of the selected workload. */
  RequestSource source(CommandLine cl) {
    if (workloadSpec != null) {
      WorkloadFile f = specFile();
      printNotes(cl, f.notes());
      return new Named(f.source(effectiveSeed(cl)), "--workload-spec " + workloadSpec);
    }
    if (tracesFile != null) {
      NotedSource traces = TokenArrayTraceReader.open(tracesFile);
      printNotes(cl, traces.notes());
      return traces.source();
    }
    if (workloadPreset != null) {
      return WorkloadSpec.preset(workloadPreset, rate, numRequests, seed).source();
    }
    if (inferencePerf != null) {
      return InferencePerfWorkload.synthetic(InferencePerfProfiles.load(inferencePerf), seed);
    }
    if (concurrency != null) {
      return SyntheticWorkload.closedLoopUsers(concurrency, (thinkTimeMs == null ? 0 : thinkTimeMs) * 1000, numRequests,
          new LengthSpec(promptTokens, promptTokensStdev, promptTokensMin, promptTokensMax),
          new LengthSpec(outputTokens, outputTokensStdev, outputTokensMin, outputTokensMax), prefixTokens, seed);
    }
    return SyntheticWorkload.poissonGaussian(rate, numRequests,
        new LengthSpec(promptTokens, promptTokensStdev, promptTokensMin, promptTokensMax),
        new LengthSpec(outputTokens, outputTokensStdev, outputTokensMin, outputTokensMax),
        prefixTokens, seed, loraPopularity());
  }

  /**
   * A source whose input errors, which a generated workload may raise only as it generates (a
   * request that would arrive after the simulated-time limit, say), name the file they come from.
   */
  private static final class Named extends io.blis.workload.ForwardingRequestSource {
    private final String name;

    Named(RequestSource delegate, String name) {
      super(delegate);
      this.name = name;
    }

    private IllegalArgumentException named(IllegalArgumentException e) {
      return new IllegalArgumentException(name + ": " + e.getMessage(), e);
    }

    @Override
    public io.blis.workload.RequestSpec next() {
      try {
        return delegate.next();
      } catch (IllegalArgumentException e) {
        throw named(e);
      }
    }

    @Override
    public java.util.List<io.blis.workload.RequestSpec> onFinished(io.blis.workload.RequestSpec request,
        io.blis.workload.RequestOutcome outcome, long timeUs) {
      try {
        return delegate.onFinished(request, outcome, timeUs);
      } catch (IllegalArgumentException e) {
        throw named(e);
      }
    }

    /** Naming errors depends on nothing else: as the source it names. */
    @Override
    public boolean readableAhead() {
      return delegate.readableAhead();
    }
  }

  /** Free text naming the workload and its seed (trace headers, run descriptions). */
  String description(CommandLine cl) {
    String what;
    if (workloadSpec != null) {
      what = "workload spec " + workloadSpec.getFileName();
    } else if (tracesFile != null) {
      what = "Go BLIS trace CSV " + tracesFile.getFileName();
    } else if (workloadPreset != null) {
      what = "preset " + workloadPreset + " at " + rate + " req/s, " + numRequests + " requests";
    } else if (inferencePerf != null) {
      what = "inference-perf profile " + inferencePerf.getFileName();
    } else {
      what = (concurrency != null ? concurrency + " closed-loop users" + (thinkTimeMs == null ? "" : " thinking "
          + thinkTimeMs + " ms") : "poisson-gaussian at " + rate + " req/s") + ", " + numRequests + " requests"
          + (loraAdapters > 0 ? ", " + lora() : "");
    }
    return what + ", seed " + effectiveSeed(cl);
  }
}
