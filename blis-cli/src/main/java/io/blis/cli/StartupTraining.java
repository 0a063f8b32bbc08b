package io.blis.cli;

import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Build-time helper, not a command: runs several {@code blis} command lines in one JVM, output
 * discarded, so that {@code -XX:DumpLoadedClassList} records in one list every class they load. The
 * build dumps that list into the class-data-sharing archive {@code blis.jsa} that the {@code ./blis}
 * launcher maps (see blis-engine's pom). One JVM, because class lists of several JVMs cannot simply
 * be concatenated (JDK 17 crashes on a repeated line; later JDKs number the classes in each list).
 *
 * <p>Usage: {@code java -cp blis.jar io.blis.cli.StartupTraining ARGS [; ARGS]...}, each
 * {@code ;} an argument of its own. Exits 0 when every command line exited 0, else 1 (with the
 * failing command line and its error output on stderr).
 */
final class StartupTraining {

  private StartupTraining() {}

  public static void main(String[] args) {
    int failures = 0;
    for (List<String> line : split(args)) {
      StringWriter err = new StringWriter();
      int code = BlisCli.execute(line.toArray(String[]::new),
          new PrintWriter(OutputStream.nullOutputStream()), new PrintWriter(err));
      if (code != 0) {
        failures++;
        System.err.println("blis " + String.join(" ", line) + ": exit " + code + ": " + err.toString().strip());
      }
    }
    System.exit(failures == 0 ? 0 : 1);
  }

  /** The command lines of {@code args}, separated by {@code ;} arguments; empty ones dropped. */
  static List<List<String>> split(String[] args) {
    List<List<String>> lines = new ArrayList<>();
    int start = 0;
    for (int i = 0; i <= args.length; i++) {
      if (i == args.length || args[i].equals(";")) {
        if (i > start) {
          lines.add(Arrays.asList(args).subList(start, i));
        }
        start = i + 1;
      }
    }
    return lines;
  }
}
