package io.blis.cli.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class ChartPageTest {

  private static ObjectNode spec(String label) {
    ObjectNode s = VegaLite.chart(200, 100);
    var rows = VegaLite.array();
    rows.addObject().put("x", 1).put("label", label);
    s.set("data", VegaLite.dataset(s, "rows", rows));
    s.put("mark", "point");
    s.putObject("encoding").set("x", VegaLite.field("x", "quantitative", "x, ms"));
    return s;
  }

  @Test
  void textAndDataCannotEndTheirElements() {
    String hostile = "</script><script>alert(1)</script> & \"quoted\"";
    String html = new ChartPage("t <b>").paragraph(hostile).chart(hostile, spec(hostile)).html();
    // the only script elements are the page's own: capture, one spec, three libraries, render
    assertThat(Pattern.compile("<script").matcher(html).results().count()).isEqualTo(6);
    assertThat(html).contains("<title>t &lt;b&gt;</title>")
        .contains("<p>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quoted&quot;</p>");
    // in the spec the same text is escaped JSON that parses back to itself
    List<JsonNode> specs = ReportPages.specs(html);
    assertThat(specs).hasSize(1);
    assertThat(ReportPages.rows(specs.get(0), "rows").get(0).get("label").asText()).isEqualTo(hostile);
    assertThat(specs.get(0).get("$schema").asText()).isEqualTo(ChartPage.SCHEMA);
  }

  @Test
  void theLibrariesAreInlinedSoThePageNeedsNoNetwork() {
    String html = new ChartPage("t").chart("c", spec("a")).html();
    for (String lib : List.of("vega", "vega-lite", "vega-embed")) {
      Matcher m = Pattern.compile("<script>/\\* " + lib + " (\\d+\\.\\d+\\.\\d+), BSD-3-Clause").matcher(html);
      assertThat(m.find()).as(lib).isTrue();
    }
    assertThat(ReportPages.loadsExternalResources(html)).isFalse();
    assertThat(ReportPages.loadsExternalResources("<p>x</p><script  src=\"https://cdn.example/v.js\">")).isTrue();
    // the libraries define what the render script calls
    assertThat(html).contains("vegaEmbed=").contains("vegaEmbed(el, spec, options)");
    assertThat(html.length()).isGreaterThan(500_000);
  }

  @Test
  void samePageSameBytes() {
    ChartPage a = new ChartPage("t").heading("h").chart("c", spec("a")).table(List.of("n", "name"),
        List.of(List.of("1.5", "x"), List.of("-2,000", "y")));
    ChartPage b = new ChartPage("t").heading("h").chart("c", spec("a")).table(List.of("n", "name"),
        List.of(List.of("1.5", "x"), List.of("-2,000", "y")));
    assertThat(a.html()).isEqualTo(b.html());
    assertThat(a.charts()).isEqualTo(1);
    assertThat(a.html()).contains("<td class=\"num\">1.5</td><td>x</td>").contains("<td class=\"num\">-2,000</td>");
    assertThat(a.html()).contains("<body data-charts=\"1\" data-rendered=\"none\">");
  }

  @Test
  void aRaggedTableIsRefused() {
    assertThatThrownBy(() -> new ChartPage("t").table(List.of("a", "b"), List.of(List.of("1"))))
        .hasMessage("table row of 1 cells under 2 headers");
  }

  @Test
  void numbersAreRoundedForDrawingAndInfinitiesBecomeNull() {
    assertThat(VegaLite.num(1234.56789).decimalValue().toPlainString()).isEqualTo("1234.6");
    assertThat(VegaLite.num(0.000123456).decimalValue().toPlainString()).isEqualTo("0.00012346");
    assertThat(VegaLite.num(2e6).decimalValue().toPlainString()).isEqualTo("2000000");
    assertThat(VegaLite.num(Double.POSITIVE_INFINITY).isNull()).isTrue();
    assertThat(VegaLite.num(Double.NaN).isNull()).isTrue();
  }

  @Test
  void scriptSafeRewritesOnlyWhatWouldCloseTheElement() {
    assertThat(VegaScripts.scriptSafe("a=\"</SCRIPT>\";b=/<!--/")).isEqualTo("a=\"<\\/SCRIPT>\";b=/<\\!--/");
    String js = VegaScripts.libraries().get(0).javaScript();
    assertThat(js.toLowerCase(java.util.Locale.ROOT)).doesNotContain("</script");
  }
}
