package io.blis.cli.sweep;

import io.blis.latency.catalog.GpuCatalog;
import io.blis.workload.StrictYaml;
import io.blis.workload.TextFiles;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * GPU prices in USD per GPU-hour, by GPU name. The bundled table ({@link #bundled()}) holds
 * illustrative example prices, marked as such in every result that uses them; a user's file
 * ({@link #load}) overrides them GPU by GPU ({@link #overriddenBy}).
 *
 * <p>File format (YAML): one {@code GPU: price} per line, the GPU a bundled name, alias or device
 * name (matched to the catalog's canonical name) or any other name (matched literally, for GPU
 * files):
 *
 * <pre>
 * H100: 2.49
 * A100-80GB: 1.29
 * </pre>
 */
public final class PriceTable {

  /**
   * One GPU's price.
   *
   * @param usdPerGpuHour price of one GPU for one hour, USD
   * @param source where it comes from: {@code "bundled example"} or the file's path
   * @param example true for the bundled example prices
   */
  public record Price(double usdPerGpuHour, String source, boolean example) {}

  /** Source of the bundled prices. */
  public static final String BUNDLED = "bundled example";

  private static final String RESOURCE = "/io/blis/cli/sweep/gpu-prices.yaml";

  /** Binding of a price file: GPU name to USD per GPU-hour. */
  static final class PriceMap extends LinkedHashMap<String, Double> {
    private static final long serialVersionUID = 1L;
  }

  private final Map<String, Price> prices;

  private PriceTable(Map<String, Price> prices) {
    this.prices = Collections.unmodifiableMap(new LinkedHashMap<>(prices));
  }

  /** No prices: every cost is unknown. */
  public static PriceTable empty() {
    return new PriceTable(Map.of());
  }

  /** The bundled example prices. */
  public static PriceTable bundled() {
    try (InputStream in = PriceTable.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("bundled GPU prices missing: " + RESOURCE);
      }
      return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), BUNDLED, true);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + RESOURCE, e);
    }
  }

  /** Reads a price file. */
  public static PriceTable load(Path file) {
    return parse(TextFiles.readConfig(file), file.toString(), false);
  }

  /**
   * Parses price text.
   *
   * @param source names the text in messages and in each price's source
   * @param example whether these are example prices
   * @throws IllegalArgumentException one line naming the source, line, column and GPU
   */
  public static PriceTable parse(String text, String source, boolean example) {
    PriceMap m = StrictYaml.parse(text, source, PriceMap.class);
    Map<String, Price> out = new LinkedHashMap<>();
    for (Map.Entry<String, Double> e : m.entrySet()) {
      Double v = e.getValue();
      String pointer = "/" + e.getKey().replace("~", "~0").replace("/", "~1");
      if (v == null || !(v > 0) || !Double.isFinite(v)) {
        throw new IllegalArgumentException(SweepGrid.where(text, source, pointer) + "the price of '" + e.getKey()
            + "' must be a positive number of USD per GPU-hour, got " + (v == null ? "nothing" : v));
      }
      String name = canonical(e.getKey());
      if (out.put(name, new Price(v, source, example)) != null) {
        throw new IllegalArgumentException(SweepGrid.where(text, source, pointer) + "'" + e.getKey()
            + "' is another name of " + name + ", which already has a price");
      }
    }
    return new PriceTable(out);
  }

  /** This table with {@code other}'s prices replacing and adding to its own. */
  public PriceTable overriddenBy(PriceTable other) {
    Map<String, Price> m = new LinkedHashMap<>(prices);
    m.putAll(other.prices);
    return new PriceTable(m);
  }

  /** The price of the first of {@code names} (a GPU as written, its canonical name, ...) that has one. */
  public Optional<Price> priceOf(String... names) {
    for (String n : names) {
      if (n == null) {
        continue;
      }
      Price p = prices.get(n);
      if (p == null) {
        p = prices.get(canonical(n));
      }
      if (p != null) {
        return Optional.of(p);
      }
    }
    return Optional.empty();
  }

  /** Every price by canonical GPU name, in the order read. */
  public Map<String, Price> prices() {
    return prices;
  }

  private static String canonical(String gpu) {
    return GpuCatalog.lookup(gpu).map(g -> g.name()).orElse(gpu);
  }
}
