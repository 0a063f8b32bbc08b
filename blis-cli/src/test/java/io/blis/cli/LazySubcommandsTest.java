package io.blis.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code blis <command> ...} registers only that command with picocli (start-up time); whatever it
 * prints and returns must be what the command line with every subcommand prints and returns.
 */
class LazySubcommandsTest {

  record Outcome(int code, String out, String err) {}

  static Outcome run(CommandLine cl, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = BlisCli.execute(cl, args, new PrintWriter(out), new PrintWriter(err));
    return new Outcome(code, out.toString(), err.toString());
  }

  @Test
  void everyKeyIsTheNameItsCommandDeclares() {
    for (Map.Entry<String, Supplier<Object>> e : BlisCli.SUBCOMMANDS.entrySet()) {
      Command c = e.getValue().get().getClass().getAnnotation(Command.class);
      assertThat(c.name()).isEqualTo(e.getKey());
      assertThat(c.aliases()).as(e.getKey() + " has no aliases (only names are looked up)").isEmpty();
    }
  }

  @Test
  void aSubcommandFirstRegistersOnlyThatOneAnythingElseRegistersAll() {
    assertThat(BlisCli.commandLineFor(new String[] {"replay", "--trace", "x"}).getSubcommands())
        .containsOnlyKeys("replay");
    assertThat(BlisCli.commandLineFor(new String[] {"--help"}).getSubcommands())
        .containsOnlyKeys(BlisCli.SUBCOMMANDS.keySet());
    assertThat(BlisCli.commandLineFor(new String[] {"--log", "info", "run"}).getSubcommands())
        .containsOnlyKeys(BlisCli.SUBCOMMANDS.keySet());
    assertThat(BlisCli.commandLineFor(new String[] {"fly"}).getSubcommands())
        .containsOnlyKeys(BlisCli.SUBCOMMANDS.keySet());
  }

  static Stream<String> argumentLists() {
    Stream<String> helps = BlisCli.SUBCOMMANDS.keySet().stream().map(n -> n + " --help");
    Stream<String> others = Stream.of(
        "run --num-requests 5",
        "run --num-requests 5 --log info",
        "run --version",
        "run --bogus 1",
        "run --rate -3",
        "run --num-requests many",
        "run --log nope",
        "run --num-reqests 5",
        "run extra",
        "replay",
        "replay --trace",
        "replay --trace no-such-file.csv.gz",
        "validate --bogus",
        "calibrate --experiments",
        "fit --bogus",
        "serve --port -1 --bogus",
        "observe --bogus",
        "interval-scales --bogus",
        "capacity --slo",
        "sweep --grid");
    return Stream.concat(helps, others);
  }

  @ParameterizedTest(name = "blis {0}")
  @MethodSource("argumentLists")
  void outputAndExitCodeAreThoseOfTheFullCommandLine(String line) {
    String[] args = line.split(" ");
    Outcome lazy = run(BlisCli.commandLineFor(args), args);
    Outcome full = run(BlisCli.commandLine(), args);
    assertThat(lazy).isEqualTo(full);
  }
}
