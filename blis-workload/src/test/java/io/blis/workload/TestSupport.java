package io.blis.workload;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Helpers shared by the tests of this module. */
public final class TestSupport {

  private TestSupport() {}

  /** Pulls every open-loop request (completing none). */
  public static List<RequestSpec> drain(RequestSource source) {
    List<RequestSpec> out = new ArrayList<>();
    RequestSpec r;
    while ((r = source.next()) != null) {
      out.add(r);
    }
    return out;
  }

  /** The ground-truth folder found by walking up from the working directory, or null. */
  public static Path groundTruth() {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null) {
      Path candidate = dir.resolve("shared/groundtruth");
      if (Files.isDirectory(candidate.resolve("requests"))) {
        return candidate;
      }
      dir = dir.getParent();
    }
    return null;
  }

  public static double mean(double[] xs) {
    double s = 0;
    for (double x : xs) {
      s += x;
    }
    return s / xs.length;
  }

  public static double cv(double[] xs) {
    double m = mean(xs);
    double v = 0;
    for (double x : xs) {
      v += (x - m) * (x - m);
    }
    return Math.sqrt(v / (xs.length - 1)) / m;
  }
}
