package io.blis.cli.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.blis.cli.BlisCli;
import io.blis.cli.sweep.Sweep;
import io.blis.cli.sweep.SweepGrid;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Opens a {@code blis validate} report and a {@code blis sweep} report, made from small real
 * inputs, in headless Chromium and reads back the rendered DOM: every chart drawn with data, no
 * script error, no console error or warning (see {@link ChartPage} for what the page records).
 * Skipped when Chromium is not installed ({@code apt-get install chromium}); another binary can be
 * named with {@code -Dblis.chromium=PATH}. {@code scripts/check-reports.sh} does the same by hand
 * and takes screenshots.
 */
class ReportBrowserTest {

  private static final Path CHROMIUM = Path.of(System.getProperty("blis.chromium", "/usr/bin/chromium"));
  private static final long TIMEOUT_S = 60;

  /** What the browser rendered. */
  record Rendered(String body, String errors, List<String> charts, String dom) {}

  @Test
  void theValidateReportRendersEveryChartWithData(@TempDir Path dir) throws Exception {
    assumeTrue(Files.isExecutable(CHROMIUM), "no Chromium at " + CHROMIUM + "; browser check skipped");
    Path html = dir.resolve("validate.html");
    Path experiments = Path.of(ReportBrowserTest.class.getResource("/validate/experiments-small.json").toURI());
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = BlisCli.execute(new String[] {"validate", "--experiments", experiments.toString(), "--html",
        html.toString(), "--threads", "1"}, new PrintWriter(out), new PrintWriter(err));
    assertThat(code).as(err.toString()).isZero();
    Rendered r = render(html, dir);
    assertEveryChartDrawn(r, 3);
    assertThat(r.dom()).contains("test-llama-2-7b-tp1-codegen-first300");
  }

  @Test
  void theSweepReportRendersEveryChartWithData(@TempDir Path dir) throws Exception {
    assumeTrue(Files.isExecutable(CHROMIUM), "no Chromium at " + CHROMIUM + "; browser check skipped");
    Path grid = Path.of(ReportBrowserTest.class.getResource("/report/sweep-grid.yaml").toURI());
    Sweep.Outcome o = Sweep.of(SweepGrid.load(grid)).threads(2).run(dir.resolve("sweep"));
    assertThat(o.table().summary().get("best").isNull()).isFalse();
    Rendered r = render(dir.resolve("sweep").resolve(Sweep.REPORT), dir);
    assertEveryChartDrawn(r, 2);
    assertThat(r.dom()).contains("Best configuration: #").contains("#3 gpu=L40S max_num_seqs=64");
  }

  @Test
  void theCheckSeesABrokenChartAndAnEmptyOne(@TempDir Path dir) throws Exception {
    assumeTrue(Files.isExecutable(CHROMIUM), "no Chromium at " + CHROMIUM + "; browser check skipped");
    var broken = VegaLite.chart(100, 100).put("mark", "no-such-mark");
    var empty = VegaLite.chart(100, 100);
    empty.set("data", VegaLite.dataset(empty, "rows", VegaLite.array()));
    empty.put("mark", "point");
    empty.putObject("encoding").set("x", VegaLite.field("x", "quantitative", "x"));
    Path html = dir.resolve("broken.html");
    Files.writeString(html, new ChartPage("broken").chart("broken", broken).chart("empty", empty).html());
    Rendered r = render(html, dir);
    assertThat(r.body()).contains("data-rendered=\"all\"");
    assertThat(r.charts()).hasSize(2);
    assertThat(r.charts().get(0)).contains("data-status=\"failed\"");
    assertThat(r.charts().get(1)).contains("data-status=\"empty\"").contains("data-marks=\"0\"");
    assertThat(r.errors()).contains("data-errors=\"2\"").contains("chart-1: ").contains("chart-2: the chart drew no data");
  }

  private static void assertEveryChartDrawn(Rendered r, int charts) {
    assertThat(r.errors()).as("errors the page recorded").contains("data-errors=\"0\"").contains("data-warnings=\"0\"");
    assertThat(r.body()).as("body").contains("data-charts=\"" + charts + "\"").contains("data-rendered=\"all\"");
    assertThat(r.charts()).hasSize(charts);
    for (String chart : r.charts()) {
      assertThat(chart).contains("data-status=\"rendered\"");
      assertThat(count(chart, "data-rows")).as(chart).isPositive();
      assertThat(count(chart, "data-marks")).as(chart).isPositive();
    }
    // the charts are drawn: an SVG with marks per chart
    assertThat(Pattern.compile("<svg ").matcher(r.dom()).results().count()).isGreaterThanOrEqualTo(charts);
  }

  private static long count(String tag, String attribute) {
    Matcher m = Pattern.compile(attribute + "=\"(\\d+)\"").matcher(tag);
    return m.find() ? Long.parseLong(m.group(1)) : -1;
  }

  /** Runs headless Chromium on the file and returns what its dumped DOM says. */
  static Rendered render(Path html, Path work) throws IOException, InterruptedException {
    Path profile = Files.createTempDirectory(work, "chromium-profile");
    Path dom = work.resolve(html.getFileName() + ".dom");
    Path log = work.resolve(html.getFileName() + ".log");
    List<String> cmd = new ArrayList<>(List.of(CHROMIUM.toString(), "--headless", "--no-sandbox", "--disable-gpu",
        "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--user-data-dir=" + profile, "--virtual-time-budget=20000", "--dump-dom",
        html.toUri().toString()));
    Process p = new ProcessBuilder(cmd).redirectOutput(dom.toFile()).redirectError(log.toFile()).start();
    try {
      if (!p.waitFor(TIMEOUT_S, TimeUnit.SECONDS)) {
        throw new AssertionError("Chromium did not finish within " + TIMEOUT_S + " s on " + html);
      }
    } finally {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
    }
    String text = Files.readString(dom, StandardCharsets.UTF_8);
    if (p.exitValue() != 0 || text.isBlank()) {
      throw new AssertionError("Chromium exited with " + p.exitValue() + " and no DOM; its log ends: "
          + tail(Files.readString(log, StandardCharsets.UTF_8)));
    }
    List<String> charts = new ArrayList<>();
    Matcher m = Pattern.compile("<div class=\"blis-chart[^\"]*\"[^>]*>").matcher(text);
    while (m.find()) {
      charts.add(m.group());
    }
    return new Rendered(first(text, "<body[^>]*>"), first(text, "<div id=\"blis-errors\"[^>]*>(.*?)</div>(?=\\s*<script)"),
        charts, text);
  }

  private static String first(String text, String regex) {
    Matcher m = Pattern.compile(regex, Pattern.DOTALL).matcher(text);
    return m.find() ? m.group() : "(no match for " + regex + ")";
  }

  private static String tail(String s) {
    return s.length() <= 2000 ? s : s.substring(s.length() - 2000);
  }
}
