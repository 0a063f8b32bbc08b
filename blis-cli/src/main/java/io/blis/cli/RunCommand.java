package io.blis.cli;

import io.blis.engine.result.OutputFiles;
import io.blis.engine.result.SimulationResult;
import io.blis.engine.validate.Ensemble;
import io.blis.workload.RequestSource;
import io.blis.workload.trace.TraceHeader;
import io.blis.workload.trace.TraceWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code blis run}: generates a workload (Poisson arrivals with Gaussian lengths by default, or a
 * workload spec, a preset or an inference-perf profile), simulates the deployment and prints the
 * result JSON; {@code --trace-out} records every request the engine pulled as a BLIS trace that
 * {@code blis replay} reads back.
 */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = "Generate a workload, simulate vLLM instance(s), print the result JSON.")
final class RunCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin DeploymentOptions deployment;

  @Mixin IntervalOptions intervalOptions = new IntervalOptions();

  @Mixin WorkloadOptions workload = new WorkloadOptions();

  @Option(names = "--trace-out", paramLabel = "FILE",
      description = "Write every request the engine pulled as a BLIS trace (gzip when FILE ends in .gz), for 'blis replay'.")
  Path traceOut;

  @Option(names = "--trace-token-ids", description = "Include the prompt token ids in the --trace-out trace.")
  boolean traceTokenIds;

  @Option(names = "--trace-output", paramLabel = "PREFIX",
      description = "Go BLIS: write the run's requests, with their simulated times, as a TraceV2 pair PREFIX.yaml"
          + " and PREFIX.csv (header mode generated, with the --kv-offload-config simulated), for 'blis replay'.")
  Path traceOutput;

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(RunCommand.class);

  @Override
  public Integer call() {
    validate();
    if (LOG.isInfoEnabled()) {
      LOG.info("workload: {}", workload.describe(effectiveSeed()));
    }
    long t0 = System.nanoTime();
    Ensemble ensemble = intervalOptions.resolve(deployment.latencyModel());
    TraceV2Export export = traceOutput == null ? null : new TraceV2Export(traceOutput);
    if (export != null) {
      deployment.keepRecords = true;
    }
    RequestSource source = export == null ? traced(workloadSource()) : export.watching(traced(workloadSource()));
    SimulationResult result;
    try (source) {
      noteWorkSize();
      result = deployment.simulate(source, effectiveSeed());
      // requests the deployment's settings refused: a warning line, or no result when all were
      RefusedRequests.check(spec.commandLine(), result, deployment.loraSpec() != null);
    } catch (RuntimeException e) {
      if (traceTmp != null) {
        OutputFiles.discard(traceTmp);
      }
      throw e;
    }
    if (traceTmp != null) {
      Cli.commit("--trace-out", traceTmp, traceOut);
    }
    if (export != null) {
      export.write(result, effectiveSeed(), deployment.offloadHeaderYaml(effectiveSeed()));
      if (!deployment.perRequest()) {
        result = result.withoutRequests();
      }
    }
    if (LOG.isInfoEnabled()) {
      LOG.info("simulated {} requests ({} completed) over {} s of simulated time in {} s",
          result.overall().injectedRequests(), result.overall().completedRequests(),
          String.format(java.util.Locale.ROOT, "%.1f", result.simulatedDurationUs() / 1e6),
          String.format(java.util.Locale.ROOT, "%.2f", (System.nanoTime() - t0) / 1e9));
    }
    deployment.emit(spec.commandLine(), result, ensemble, intervalOptions.level, this::workloadSource,
        effectiveSeed());
    return 0;
  }

  /**
   * Checks the flags as {@link #call} does, and builds the deployment (its policies and scaler
   * with their parameters) without running it: a bad flag is a {@link
   * picocli.CommandLine.ParameterException} of this command, a bad parameter an {@link
   * IllegalArgumentException}. For {@code blis day}, which checks every point before simulating
   * any.
   */
  void check() {
    validate();
    deployment.builder(effectiveSeed(), null, null); // the policies and the scaler with their parameters
  }

  /**
   * Notes the size of a decision trace of many requests ({@link WorkSize#decisionTrace}) before the
   * simulation starts, once every input is checked (a refusal stays the only line).
   */
  private void noteWorkSize() {
    if (!deployment.decisionTrace() || workload.flagRequests() < 1) {
      return;
    }
    String note = WorkSize.decisionTrace(workload.flagRequests(), deployment.instances(effectiveSeed()));
    if (note != null) {
      deployment.requireInstancesFit(effectiveSeed()); // what the simulation would refuse, refused before the note
      Cli.printNotes(spec.commandLine(), List.of(note));
    }
  }

  /** Whether the flags scale the pool (after {@link #check}). */
  boolean autoscaled() {
    return deployment.autoscale.enabled();
  }

  /** Whether the node's price is the bundled example one (after {@link #check}). */
  boolean examplePrice() {
    return deployment.autoscale.examplePrice();
  }

  /** Checks the flags and simulates, printing and writing nothing: one point of {@code blis day}. */
  SimulationResult simulateOnly() {
    validate();
    try (RequestSource source = workloadSource()) {
      return deployment.simulate(source, effectiveSeed());
    }
  }

  private void validate() {
    deployment.validate(spec.commandLine());
    workload.validate(spec.commandLine(), List.of());
    require(traceOut != null || !traceTokenIds, "--trace-token-ids needs --trace-out");
    if (traceOut != null) {
      Cli.requireWritable("--trace-out", traceOut);
    }
    if (traceOutput != null) {
      Cli.requireWritable("--trace-output", Path.of(traceOutput + ".yaml"));
      Cli.requireWritable("--trace-output", Path.of(traceOutput + ".csv"));
    }
  }

  private void require(boolean ok, String message) {
    DeploymentOptions.require(spec.commandLine(), ok, message);
  }

  private long effectiveSeed() {
    return workload.effectiveSeed(spec.commandLine());
  }

  private RequestSource workloadSource() {
    return workload.source(spec.commandLine());
  }

  /** Where --trace-out streams before it is moved into place (each run its own); null before. */
  private Path traceTmp;

  /**
   * With --trace-out, wraps {@code source} so every request it hands out is written, to a
   * temporary file beside FILE ({@link #traceTmp}; gzip when FILE ends in .gz), moved to FILE when
   * the run is complete.
   */
  private RequestSource traced(RequestSource source) {
    if (traceOut == null) {
      return source;
    }
    TraceHeader header = TraceHeader.of(effectiveSeed(), traceTokenIds,
        "blis run: " + workload.description(spec.commandLine()));
    Path tmp = OutputFiles.temporary(Cli.parentsCreated("--trace-out", traceOut));
    traceTmp = tmp;
    try {
      return new TracingSource(source,
          TraceWriter.create(OutputFiles.open(tmp), header, traceOut.getFileName().toString().endsWith(".gz"),
              workload.namesModels(), workload.namesAdapters()),
          "--trace-out", traceOut);
    } catch (java.io.IOException e) {
      OutputFiles.discard(tmp);
      throw new java.io.UncheckedIOException("--trace-out: cannot write " + traceOut + ": " + io.blis.workload.TextFiles.reason(e), e);
    }
  }
}
