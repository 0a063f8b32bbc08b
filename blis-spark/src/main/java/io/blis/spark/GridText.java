package io.blis.spark;

import io.blis.cli.sweep.SweepGrid;
import java.io.Serializable;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a task receives of the grid: the grid file's text, its name, the directory its relative
 * paths are relative to, and the fingerprint the driver computed. An executor parses the text
 * again ({@link #grid()}), once per JVM for the tasks that share it, and refuses to run when its
 * fingerprint differs: the workload or coefficient files the grid names are not the driver's
 * there.
 *
 * @param text the grid file's text
 * @param source the grid's name in messages and in {@code summary.json}
 * @param baseDir the driver's directory of the grid file, absolute
 * @param fingerprint {@link SweepGrid#fingerprint()} on the driver
 */
record GridText(String text, String source, String baseDir, String fingerprint) implements Serializable {

  private static final long serialVersionUID = 1L;

  /** Grids parsed in this JVM, the most recent few. */
  private static final Map<GridText, SweepGrid> PARSED = new LinkedHashMap<>(4, 0.75f, true) {
    private static final long serialVersionUID = 1L;

    @Override
    protected boolean removeEldestEntry(Map.Entry<GridText, SweepGrid> eldest) {
      return size() > 4;
    }
  };

  /** The text of a grid parsed on the driver. */
  static GridText of(String text, SweepGrid grid) {
    return new GridText(text, grid.source(), grid.deployment().baseDir().toAbsolutePath().toString(),
        grid.fingerprint());
  }

  /**
   * The grid, parsed here at the first call (tasks of one JVM share it).
   *
   * @throws IllegalArgumentException when the grid does not parse here, or parses to another
   *     fingerprint than on the driver
   */
  SweepGrid grid() {
    synchronized (PARSED) {
      SweepGrid g = PARSED.get(this);
      if (g == null) {
        g = SweepGrid.parse(text, source, Path.of(baseDir));
        if (!g.fingerprint().equals(fingerprint)) {
          throw new IllegalArgumentException(source + " has fingerprint " + g.fingerprint() + " on this executor and "
              + fingerprint + " on the driver: the workload or coefficient files it names differ; every executor"
              + " needs the driver's files at the same paths (" + baseDir + ")");
        }
        PARSED.put(this, g);
      }
      return g;
    }
  }
}
