package io.blis.cli;

import java.io.PrintWriter;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code blis} command line. Subcommands are registered in {@link #SUBCOMMANDS}; {@code blis}
 * without arguments runs {@code blis run} with its embedded defaults.
 *
 * <p>Exit codes: 0 success, 2 bad input (unknown flag, invalid value, unknown model, GPU or
 * latency model, unreadable file), 1 anything else. Errors are printed to stderr as one line,
 * never as a stack trace.
 */
@Command(
    name = "blis",
    mixinStandardHelpOptions = true,
    version = "blis 0.1.0",
    description = "Simulates a vLLM v1 inference server without a GPU.")
public final class BlisCli implements Runnable {

  /** Exit code of bad input. */
  public static final int USAGE_ERROR = 2;

  /**
   * Every subcommand by its {@code @Command} name, in help order. Add new commands here (a test checks
   * that each key is the name its command declares).
   */
  static final Map<String, Supplier<Object>> SUBCOMMANDS = subcommands();

  private static Map<String, Supplier<Object>> subcommands() {
    Map<String, Supplier<Object>> m = new LinkedHashMap<>();
    m.put("run", RunCommand::new);
    m.put("replay", ReplayCommand::new);
    m.put("validate", ValidateCommand::new);
    m.put("calibrate", CalibrateCommand::new);
    m.put("fit", FitCommand::new);
    m.put("serve", ServeCommand::new);
    m.put("observe", ObserveCommand::new);
    m.put("interval-scales", IntervalScalesCommand::new);
    m.put("corpus", CorpusCommand::new);
    m.put("capacity", CapacityCommand::new);
    m.put("sweep", SweepCommand::new);
    m.put("day", DayCommand::new);
    m.put("convert", ConvertCommand::new);
    m.put("compose", ComposeCommand::new);
    m.put("gpu-profile", GpuProfileCommand::new);
    return Collections.unmodifiableMap(m);
  }

  @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;

  /** Log levels {@code --log} accepts, Go BLIS's (logrus) names included. */
  static final List<String> LOG_LEVELS = List.of("trace", "debug", "info", "warn", "error", "fatal", "panic", "off");

  /** The SLF4J simple binding's level property (the CLI ships that binding; the library ships none). */
  static final String LOG_PROPERTY = "org.slf4j.simpleLogger.defaultLogLevel";

  @picocli.CommandLine.Option(names = "--log", paramLabel = "LEVEL", scope = picocli.CommandLine.ScopeType.INHERIT,
      description = "Log level on stderr: trace, debug, info, warn, error (fatal and panic as error) (default: warn);"
          + " info shows the resolved deployment, the KV cache and where its size came from, the coefficients and the"
          + " workload.")
  void setLog(String level) {
    if (!LOG_LEVELS.contains(level)) {
      throw new picocli.CommandLine.ParameterException(spec.commandLine(),
          "--log must be one of " + String.join(", ", LOG_LEVELS) + ", got '" + level + "'");
    }
  }

  @Override
  public void run() {
    // `blis` alone is handled in execute(): it runs `blis run`.
  }

  /**
   * Sets the logging level from {@code --log} before any logger exists (SLF4J's simple binding reads
   * it once): {@code warn} unless given; an invalid level is left for the parser to report (at warn).
   */
  static void configureLogging(String[] args) {
    String level = "warn";
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--log") && i + 1 < args.length) {
        level = args[i + 1];
      } else if (args[i].startsWith("--log=")) {
        level = args[i].substring("--log=".length());
      }
    }
    level = level.equals("fatal") || level.equals("panic") ? "error" : LOG_LEVELS.contains(level) ? level : "warn";
    if (System.getProperty(LOG_PROPERTY) == null) {
      System.setProperty(LOG_PROPERTY, level);
      System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
      System.setProperty("org.slf4j.simpleLogger.showThreadName", "false");
      System.setProperty("org.slf4j.simpleLogger.showShortLogName", "true");
    }
  }

  /** Commands that finish their outputs in a shutdown hook of their own when stopped (SIGTERM, Ctrl-C). */
  private static final java.util.Set<String> GRACEFUL = java.util.Set.of("observe", "serve");

  /** Builds the command line with every subcommand and the one-line error handlers. */
  public static CommandLine commandLine() {
    return commandLine(SUBCOMMANDS.keySet());
  }

  /**
   * The command line for {@code args}: when the first argument names a subcommand, only that one is
   * registered. picocli builds a command's model from its annotations by reflection when the command
   * is registered, which for all of them costs more start-up time than a short simulation; a
   * subcommand's parsing, help and messages do not depend on its siblings, so the output is the same.
   * Anything else ({@code --help}, {@code --version}, an unknown command) gets every subcommand.
   */
  static CommandLine commandLineFor(String[] args) {
    return args.length > 0 && SUBCOMMANDS.containsKey(args[0])
        ? commandLine(List.of(args[0])) : commandLine();
  }

  private static CommandLine commandLine(Collection<String> names) {
    CommandLine cl = new CommandLine(new BlisCli());
    for (String name : names) {
      cl.addSubcommand(SUBCOMMANDS.get(name).get());
    }
    cl.getSubcommands().values().forEach(RefusedOptions::hideFromHelp);
    if (cl.getSubcommands().containsKey("convert")) {
      // `convert --from inference-perf FILE`: a kind, not Go BLIS's `convert inference-perf` form
      cl.getSubcommands().get("convert").setAllowSubcommandsAsOptionParameters(true);
    }
    cl.setParameterExceptionHandler(BlisCli::onParameterError);
    cl.setExecutionExceptionHandler(BlisCli::onExecutionError);
    return cl;
  }

  /** Runs {@code args} and returns the exit code (no {@code System.exit}). */
  public static int execute(String[] args, PrintWriter out, PrintWriter err) {
    configureLogging(args); // no effect once a logger exists (the first call in a JVM decides)
    String[] effective = args.length == 0 ? new String[] {"run"} : args;
    return execute(commandLineFor(effective), effective, out, err);
  }

  /** Runs {@code args} on {@code cl} and returns the exit code. */
  static int execute(CommandLine cl, String[] args, PrintWriter out, PrintWriter err) {
    cl.setOut(out);
    cl.setErr(err);
    int code;
    try {
      code = cl.execute(args);
    } catch (OutOfMemoryError e) {
      // the work's memory is unreachable once its stack has unwound: there is room to say why
      String command = args.length > 0 && SUBCOMMANDS.containsKey(args[0]) ? "blis " + args[0] : "blis";
      err.printf(java.util.Locale.ROOT, "%s: out of memory (the Java heap is limited to %,d MiB): give the JVM more,"
          + " e.g. BLIS_JAVA_OPTS=-Xmx16g, or make the run smaller%n", command, Runtime.getRuntime().maxMemory() >> 20);
      code = 1;
    }
    out.flush();
    err.flush();
    return code;
  }

  public static void main(String[] args) {
    if (args.length == 0 || !GRACEFUL.contains(args[0])) {
      // a stopped command abandons its outputs: leave no temporary file behind
      io.blis.engine.result.OutputFiles.discardUnfinishedOnExit();
    }
    PrintWriter out = new PrintWriter(System.out, true);
    PrintWriter err = new PrintWriter(System.err, true);
    System.exit(execute(args, out, err));
  }

  private static int onParameterError(CommandLine.ParameterException e, String[] args) {
    CommandLine cl = e.getCommandLine();
    String hint = "";
    if (e instanceof CommandLine.UnmatchedArgumentException u && !u.getSuggestions().isEmpty()) {
      // a mistyped command or option: name the nearest ones picocli finds
      hint = "; did you mean " + String.join(" or ", u.getSuggestions().stream().limit(3)
          .map(x -> "'" + x + "'").toList()) + "?";
    }
    cl.getErr().println(qualifiedName(cl) + ": " + oneLine(e.getMessage()) + hint
        + " (see '" + qualifiedName(cl) + " --help')");
    return USAGE_ERROR;
  }

  private static int onExecutionError(Exception e, CommandLine cl,
      CommandLine.ParseResult parseResult) {
    if (e instanceof io.blis.engine.BacklogLimitException b) {
      cl.getErr().println(qualifiedName(cl) + ": " + b.getMessage() + "; lower the rate or add instances, or raise"
          + " --max-backlog (" + b.limit() + ") if the memory allows");
      return 1;
    }
    if ((e instanceof IllegalArgumentException || e instanceof java.io.UncheckedIOException)
        && !oneLine(e.getMessage()).isEmpty()) {
      cl.getErr().println(qualifiedName(cl) + ": " + oneLine(e.getMessage()));
      return USAGE_ERROR;
    }
    cl.getErr().println(qualifiedName(cl) + ": internal error: " + e.getClass().getSimpleName()
        + ": " + oneLine(String.valueOf(e.getMessage())));
    return 1;
  }

  private static String qualifiedName(CommandLine cl) {
    return cl.getParent() == null ? cl.getCommandName()
        : qualifiedName(cl.getParent()) + " " + cl.getCommandName();
  }

  /** Collapses a message to one line. */
  static String oneLine(String message) {
    return message == null ? "" : message.replaceAll("\\s*\\R\\s*", " ").trim();
  }
}
