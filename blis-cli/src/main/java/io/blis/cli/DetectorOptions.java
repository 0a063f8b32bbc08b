package io.blis.cli;

import java.nio.file.Path;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * Go BLIS's saturation detector flags, shared by {@code run}, {@code replay} and {@code observe}
 * (a picocli mixin): {@code --detectors}, {@code --saturation-config}, {@code --saturation-report}
 * and {@code --saturation-final-window}. See {@link SaturationTrace}.
 */
final class DetectorOptions {

  @Option(names = "--detectors", paramLabel = "NAMES",
      description = "Go BLIS: saturation detectors run over the completed requests' arrivals and completions:"
          + " composite, threshold, backlog-drift, a comma list, or all; their final labels go to the result's"
          + " saturation object.")
  String detectors;

  @Option(names = "--saturation-config", paramLabel = "FILE",
      description = "Go BLIS: tuning of --detectors (threshold: {threshold_ms}, backlog_drift: {window_size_sec, ...}).")
  Path saturationConfig;

  @Option(names = "--saturation-report", paramLabel = "FILE",
      description = "Go BLIS: write every event's verdicts of --detectors and their final labels to FILE (JSON).")
  Path saturationReport;

  @Option(names = "--saturation-final-window", paramLabel = "DURATION",
      description = "Go BLIS: trailing window of the final labels' vote, e.g. 30s (default: backlog_drift's window"
          + " when the config sets it, else 30s).")
  String saturationFinalWindow;

  /** The detectors, after {@link #validate}; null without --detectors. */
  private SaturationTrace trace;

  /** Checks the flags and reads the configuration: one line naming the flag or file when wrong. */
  void validate(CommandLine cl) {
    DeploymentOptions.require(cl, detectors != null || (saturationConfig == null && saturationReport == null
        && saturationFinalWindow == null), "--saturation-config, --saturation-report and --saturation-final-window"
        + " need --detectors");
    if (detectors == null) {
      return;
    }
    if (saturationConfig != null) {
      Cli.requireFile("--saturation-config", saturationConfig);
    }
    try {
      trace = SaturationTrace.of(detectors, saturationConfig, saturationFinalWindow);
    } catch (IllegalArgumentException e) {
      if (saturationConfig != null && e.getMessage().startsWith(saturationConfig.toString())) {
        throw e; // a file's error names the file, line and key
      }
      throw new CommandLine.ParameterException(cl, e.getMessage());
    }
    if (saturationReport != null) {
      Cli.requireWritable("--saturation-report", saturationReport);
    }
  }

  /** Whether --detectors was given. */
  boolean enabled() {
    return trace != null;
  }

  /**
   * The final labels over {@code events}, writing --saturation-report when given and {@code
   * report}.
   */
  Map<String, String> finals(SaturationTrace.Events events, boolean report) {
    Map<String, String> finals = trace.finals(events);
    if (report && saturationReport != null) {
      trace.writeReport(events, finals, saturationReport);
    }
    return finals;
  }
}
