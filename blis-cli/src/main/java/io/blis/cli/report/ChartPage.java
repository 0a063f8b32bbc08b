package io.blis.cli.report;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.CharacterEscapes;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A self-contained HTML page of text, tables and Vega-Lite charts: the chart libraries ({@link
 * VegaScripts}) and every chart's data are inlined, so the file opens from disk with no network.
 * The same calls give the same bytes (no dates, no random ids).
 *
 * <pre>{@code
 * ChartPage page = new ChartPage("BLIS sweep");
 * page.paragraph("Best: ...").heading("Curves").chart("Latency against throughput", spec);
 * Files.writeString(path, page.html());
 * }</pre>
 *
 * <p><b>Checking a page.</b> The page records what went wrong where a test (or a person) can see
 * it: script errors, rejected promises, {@code console.error} and {@code console.warn} calls
 * (Vega reports bad data through them) become lines in {@code <div id="blis-errors">}, with the
 * counts in its {@code data-errors} and {@code data-warnings} attributes. Each chart's {@code
 * <div class="blis-chart">} gets {@code data-status} ({@code pending}, then {@code rendered},
 * {@code empty} or {@code failed}), {@code data-rows} (rows of inline data, arrays to be flattened
 * counted by their length) and {@code data-marks} (data marks drawn: points, line vertices, bars,
 * rules; not axes or legends); the body gets {@code data-rendered="all"} when every chart is done.
 * {@code scripts/check-reports.sh} and {@code ReportBrowserTest} read them from a headless
 * browser's DOM.
 */
public final class ChartPage {

  /** Vega-Lite's schema, named by every chart (vega-embed reads the mode from it; nothing is fetched). */
  public static final String SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json";

  private static final ObjectMapper JSON = htmlSafeMapper();
  private static final Pattern NUMBER = Pattern.compile("[-+]?(\\d[\\d,]*\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?%?");

  private final String title;
  private final StringBuilder body = new StringBuilder();
  private int charts;

  /** An empty page with a title (also its first heading). */
  public ChartPage(String title) {
    this.title = Objects.requireNonNull(title, "title");
  }

  /** A section heading. */
  public ChartPage heading(String text) {
    return element("<h2>", text, "</h2>");
  }

  /** A smaller heading, within a section. */
  public ChartPage subheading(String text) {
    return element("<h3>", text, "</h3>");
  }

  /** A paragraph of plain text. */
  public ChartPage paragraph(String text) {
    return element("<p>", text, "</p>");
  }

  /** A paragraph set apart as the page's main finding. */
  public ChartPage highlight(String text) {
    return element("<p class=\"highlight\">", text, "</p>");
  }

  /** A paragraph in smaller grey type: how to read what follows, caveats. */
  public ChartPage note(String text) {
    return element("<p class=\"note\">", text, "</p>");
  }

  private ChartPage element(String open, String text, String close) {
    body.append(open).append(escape(text)).append(close).append('\n');
    return this;
  }

  /**
   * A Vega-Lite chart with its data inline.
   *
   * @param caption what the chart shows, in words (under it, and its accessible name)
   * @param spec a Vega-Lite specification; {@link #SCHEMA} is added when it names none
   */
  public ChartPage chart(String caption, ObjectNode spec) {
    ObjectNode s = spec.deepCopy();
    if (!s.has("$schema")) {
      ObjectNode withSchema = s.objectNode().put("$schema", SCHEMA);
      withSchema.setAll(s);
      s = withSchema;
    }
    charts++;
    String id = "chart-" + charts;
    body.append("<figure>\n<div class=\"blis-chart\" id=\"").append(id).append("\" role=\"img\" aria-label=\"")
        .append(escape(caption)).append("\" data-status=\"pending\"></div>\n")
        .append("<script type=\"application/json\" id=\"").append(id).append("-spec\">").append(json(s))
        .append("</script>\n<figcaption>").append(escape(caption)).append("</figcaption>\n</figure>\n");
    return this;
  }

  /** A table; cells that are numbers are aligned right. */
  public ChartPage table(List<String> header, List<List<String>> rows) {
    body.append("<table>\n<thead><tr>");
    for (String h : header) {
      body.append("<th>").append(escape(h)).append("</th>");
    }
    body.append("</tr></thead>\n<tbody>\n");
    for (List<String> row : rows) {
      if (row.size() != header.size()) {
        throw new IllegalArgumentException("table row of " + row.size() + " cells under " + header.size() + " headers");
      }
      body.append("<tr>");
      for (String cell : row) {
        body.append(NUMBER.matcher(cell).matches() ? "<td class=\"num\">" : "<td>").append(escape(cell)).append("</td>");
      }
      body.append("</tr>\n");
    }
    body.append("</tbody>\n</table>\n");
    return this;
  }

  /** Preformatted text (a fixed-width table printed by the command). */
  public ChartPage preformatted(String text) {
    body.append("<pre>").append(escape(text)).append("</pre>\n");
    return this;
  }

  /** Charts added so far. */
  public int charts() {
    return charts;
  }

  /** The page. */
  public String html() {
    StringBuilder sb = new StringBuilder(body.length() + 900_000);
    sb.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
        .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
        .append("<title>").append(escape(title)).append("</title>\n<style>\n").append(STYLE).append("</style>\n")
        .append("</head>\n<body data-charts=\"").append(charts).append("\" data-rendered=\"none\">\n")
        .append("<div id=\"blis-errors\" data-errors=\"0\" data-warnings=\"0\"></div>\n")
        .append("<script>\n").append(CAPTURE).append("</script>\n")
        .append("<h1>").append(escape(title)).append("</h1>\n")
        .append(body);
    for (VegaScripts.Library lib : VegaScripts.libraries()) {
      sb.append("<script>/* ").append(lib.name()).append(' ').append(lib.version()).append(", ")
          .append(lib.license()).append(", inlined from the WebJar org.webjars:").append(lib.name()).append(" */\n")
          .append(lib.javaScript()).append("\n</script>\n");
    }
    sb.append("<script>\n").append(RENDER.replace("EMBED_OPTIONS", json(embedOptions()))).append("</script>\n")
        .append("</body>\n</html>\n");
    return sb.toString();
  }

  /** vega-embed's options: SVG, export menu only (no editor link, which would leave the page), the look. */
  private static ObjectNode embedOptions() {
    ObjectNode o = JSON.createObjectNode();
    o.put("renderer", "svg");
    ObjectNode actions = o.putObject("actions");
    actions.put("export", true).put("source", false).put("compiled", false).put("editor", false);
    ObjectNode config = o.putObject("config");
    config.put("font", "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif");
    config.putObject("axis").put("labelFontSize", 11).put("titleFontSize", 12).put("titleFontWeight", "normal")
        .put("gridColor", "#e6e6e6");
    config.putObject("legend").put("labelFontSize", 11).put("titleFontSize", 12).put("titleFontWeight", "normal")
        .put("labelLimit", 360);
    config.putObject("header").put("labelFontSize", 12).put("titleFontSize", 12);
    config.putObject("title").put("fontSize", 13).put("anchor", "start").put("fontWeight", "bold");
    config.putObject("view").put("stroke", "#cccccc");
    return o;
  }

  /** JSON that may sit inside a {@code <script>} element: {@code <}, {@code >} and {@code &} escaped. */
  static String json(JsonNode n) {
    try {
      return JSON.writeValueAsString(n);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot render chart JSON", e);
    }
  }

  private static ObjectMapper htmlSafeMapper() {
    ObjectMapper m = JsonMapper.builder().build();
    m.getFactory().setCharacterEscapes(new CharacterEscapes() {
      private static final long serialVersionUID = 1L;
      private final int[] codes = htmlCodes();

      @Override
      public int[] getEscapeCodesForAscii() {
        return codes;
      }

      @Override
      public SerializableString getEscapeSequence(int ch) {
        return null;
      }
    });
    return m;
  }

  private static int[] htmlCodes() {
    int[] c = CharacterEscapes.standardAsciiEscapesForJSON();
    c['<'] = CharacterEscapes.ESCAPE_STANDARD;
    c['>'] = CharacterEscapes.ESCAPE_STANDARD;
    c['&'] = CharacterEscapes.ESCAPE_STANDARD;
    return c;
  }

  /** Text as HTML character data or attribute value. */
  public static String escape(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
  }

  private static final String STYLE = """
      body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;margin:24px auto;
        max-width:1180px;padding:0 16px;color:#222;line-height:1.4;font-size:14px}
      h1{font-size:22px;margin:0 0 8px}
      h2{font-size:17px;margin:28px 0 6px;border-bottom:1px solid #ddd;padding-bottom:3px}
      h3{font-size:14px;margin:18px 0 4px}
      p{margin:6px 0}
      .note{color:#555;font-size:13px}
      .highlight{background:#eef5fb;border-left:4px solid #2b7bb9;padding:8px 12px;font-size:15px}
      figure{margin:10px 0 18px}
      figcaption{color:#555;font-size:12px;margin-top:2px}
      table{border-collapse:collapse;font-size:12px;margin:8px 0}
      th,td{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}
      th{background:#f4f4f4}
      td.num{text-align:right;font-variant-numeric:tabular-nums}
      td:first-child{white-space:nowrap}
      pre{font-size:11px;background:#f8f8f8;padding:8px;overflow-x:auto}
      #blis-errors{color:#a00;background:#fff0f0;border:1px solid #e0a0a0;padding:6px 10px;margin-bottom:12px;
        font-family:monospace;font-size:12px;white-space:pre-wrap}
      #blis-errors:empty{display:none}
      """;

  /** First script of the body: errors, rejections, console.error and console.warn into #blis-errors. */
  private static final String CAPTURE = """
      (function () {
        var box = document.getElementById('blis-errors');
        function report(kind, text) {
          var line = document.createElement('div');
          line.className = 'blis-' + kind;
          line.textContent = kind + ': ' + text;
          box.appendChild(line);
          box.setAttribute('data-' + kind + 's', String(box.getElementsByClassName('blis-' + kind).length));
        }
        function text(args) {
          return Array.prototype.map.call(args, function (a) {
            return a && a.message ? a.message : String(a);
          }).join(' ');
        }
        window.blisReport = report;
        window.addEventListener('error', function (e) {
          report('error', (e.message || String(e)) + (e.filename ? ' (' + e.filename + ':' + e.lineno + ')' : ''));
        });
        window.addEventListener('unhandledrejection', function (e) {
          report('error', 'unhandled rejection: ' + (e.reason && e.reason.message ? e.reason.message : e.reason));
        });
        var error = console.error;
        var warn = console.warn;
        console.error = function () { report('error', text(arguments)); return error.apply(console, arguments); };
        console.warn = function () { report('warning', text(arguments)); return warn.apply(console, arguments); };
      })();
      """;

  /** Last script: embeds every chart, then writes its status, rows and marks. */
  private static final String RENDER = """
      (function () {
        var charts = document.querySelectorAll('div.blis-chart');
        var left = charts.length;
        function finished() {
          left--;
          if (left === 0) { document.body.setAttribute('data-rendered', 'all'); }
        }
        function rows(spec) {
          var n = 0;
          var sets = spec.datasets || {};
          Object.keys(sets).forEach(function (k) {
            sets[k].forEach(function (row) {
              var m = 1;
              Object.keys(row).forEach(function (f) { if (Array.isArray(row[f])) { m = Math.max(m, row[f].length); } });
              n += m;
            });
          });
          return n;
        }
        function marks(mark) {
          if (!mark || !mark.items) { return 0; }
          if (mark.marktype === 'group') {
            var n = 0;
            mark.items.forEach(function (g) { (g.items || []).forEach(function (m) { n += marks(m); }); });
            return n;
          }
          return mark.role === 'mark' ? mark.items.length : 0;
        }
        if (typeof vegaEmbed !== 'function') {
          window.blisReport('error', 'the chart library (vega-embed) did not load');
          return;
        }
        if (left === 0) { document.body.setAttribute('data-rendered', 'all'); }
        var options = EMBED_OPTIONS;
        Array.prototype.forEach.call(charts, function (el) {
          var spec;
          try {
            spec = JSON.parse(document.getElementById(el.id + '-spec').textContent);
          } catch (e) {
            el.setAttribute('data-status', 'failed');
            window.blisReport('error', el.id + ': ' + e.message);
            finished();
            return;
          }
          el.setAttribute('data-rows', String(rows(spec)));
          vegaEmbed(el, spec, options).then(function (result) {
            var n = marks(result.view.scenegraph().root);
            el.setAttribute('data-marks', String(n));
            el.setAttribute('data-status', n > 0 ? 'rendered' : 'empty');
            if (n === 0) { window.blisReport('error', el.id + ': the chart drew no data'); }
          }).catch(function (e) {
            el.setAttribute('data-status', 'failed');
            window.blisReport('error', el.id + ': ' + (e && e.message ? e.message : e));
          }).then(finished);
        });
      })();
      """;
}
