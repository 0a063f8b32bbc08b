package io.blis.cli.report;

import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Properties;

/**
 * The chart libraries a page inlines: Vega, Vega-Lite and vega-embed, minified, read from their
 * WebJars on the classpath ({@code org.webjars:vega}, {@code vega-lite}, {@code vega-embed}; the
 * versions are the ones the build pins, read from each jar's {@code pom.properties}). Read once.
 */
final class VegaScripts {

  /**
   * One library.
   *
   * @param name the WebJar's name
   * @param version its version
   * @param license its licence (all three are BSD-3-Clause)
   * @param javaScript the minified script, safe to place between {@code <script>} tags
   */
  record Library(String name, String version, String license, String javaScript) {}

  /** In the order a page must load them. */
  private static final List<String> NAMES = List.of("vega", "vega-lite", "vega-embed");

  private VegaScripts() {}

  private static final class Holder {
    static final List<Library> LIBRARIES = NAMES.stream().map(VegaScripts::load).toList();
  }

  /** Vega, Vega-Lite and vega-embed, in load order. */
  static List<Library> libraries() {
    return Holder.LIBRARIES;
  }

  private static Library load(String name) {
    String version = version(name);
    String path = "META-INF/resources/webjars/" + name + "/" + version + "/" + name + ".min.js";
    return new Library(name, version, "BSD-3-Clause", scriptSafe(read(path, name)));
  }

  private static String version(String name) {
    Properties p = new Properties();
    String path = "META-INF/maven/org.webjars/" + name + "/pom.properties";
    try {
      p.load(new StringReader(read(path, name)));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + path + ": " + e.getMessage(), e);
    }
    String v = p.getProperty("version");
    if (v == null || v.isBlank()) {
      throw new IllegalStateException(path + " names no version");
    }
    return v.trim();
  }

  private static String read(String path, String name) {
    ClassLoader cl = VegaScripts.class.getClassLoader();
    try (InputStream in = cl.getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalStateException("chart library missing from the classpath: " + path
            + " (the jar org.webjars:" + name + ")");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + path + ": " + e.getMessage(), e);
    }
  }

  /**
   * The script with every sequence that would end or disturb an HTML {@code <script>} element
   * written another way: {@code </script} as {@code <\/script} and {@code <!--} as {@code <\!--}
   * (the same characters inside JavaScript strings and regular expressions, where alone they can
   * occur). None occurs in the pinned versions; this keeps a future version from breaking a page.
   */
  static String scriptSafe(String js) {
    return js.replaceAll("(?i)</(script)", "<\\\\/$1").replace("<!--", "<\\!--");
  }
}
