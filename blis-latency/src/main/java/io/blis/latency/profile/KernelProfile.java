package io.blis.latency.profile;

import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.dataformat.csv.CsvMapper;
import com.fasterxml.jackson.dataformat.csv.CsvParser;
import com.fasterxml.jackson.dataformat.csv.CsvSchema;
import io.blis.latency.coeff.InputTrees;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * Per-operator GPU timings of one GPU, read from profile files: the layout of the public kernel
 * profiles ({@code compute/<gpu>/<org>/<model>/mlp.csv} and {@code network/<gpu>_<topology>/
 * all_reduce.csv}, as Microsoft's Vidur publishes them) and a simple CSV of this project's design
 * (docs/gpu-efficiency.md), which a few lines of PyTorch produce on any GPU:
 *
 * <pre>
 * kind,tokens,k,n,hidden,gpus,bytes,batch,context,kv_heads,head_dim,time_us
 * gemm,16,4096,12288,,,,,,,,38.1            one GEMM: tokens x k times k x n (per GPU)
 * elementwise,16,,,4096,,,,,,,20.5          a layer's element-wise kernels (norms, rotary, activation, add)
 * allreduce,,,,,4,1048576,,,,,41.0          an all-reduce of that many bytes over that many GPUs of a node
 * decode_attention,,,,,,,64,1024,8,128,95.0 one layer's paged decode attention, 16-bit KV cache
 * </pre>
 *
 * Columns are found by name, so their order is free and a kind's unused columns may be left out.
 */
public final class KernelProfile {

  /**
   * One GEMM kernel: {@code tokens x k} activations times a {@code k x n} weight slice; {@code where}
   * is the row it was read from ({@code FILE:LINE}).
   */
  public record Gemm(String shape, int tokens, long k, long n, double us, String where) {}

  /** The element-wise kernels of one layer at {@code tokens} tokens of a model of that hidden size. */
  public record Elementwise(String shape, int tokens, int hidden, double us) {}

  /** One all-reduce of {@code bytes} over {@code gpus} GPUs of one node, read from {@code where} ({@code FILE:LINE}). */
  public record AllReduce(int gpus, long bytes, double us, String where) {}

  /** One layer's paged decode attention: {@code batch} sequences of {@code context} tokens. */
  public record DecodeAttention(int batch, int context, int kvHeads, int headDim, double us) {}

  private final List<Gemm> gemms = new ArrayList<>();
  private final List<Elementwise> elementwise = new ArrayList<>();
  private final List<AllReduce> allReduces = new ArrayList<>();
  private final List<DecodeAttention> attention = new ArrayList<>();
  private final Map<String, Integer> filesRead = new TreeMap<>();

  /**
   * The longest time a kernel timing may have, microseconds (10 s): the largest GEMM or all-reduce
   * a profile holds takes milliseconds, so a longer time is a wrong unit or a broken measurement.
   */
  static final double MAX_KERNEL_US = 1e7;

  /** The header and rows an empty file lacks, for its message. */
  private static final String EXPECTED = "a header line naming the columns (the simple format's"
      + " kind,tokens,k,n,hidden,gpus,bytes,batch,context,kv_heads,head_dim,time_us, or Vidur's mlp.csv or"
      + " all_reduce.csv columns) and a row per timing (docs/gpu-efficiency.md)";

  private static final CsvMapper CSV = new CsvMapper().enable(CsvParser.Feature.TRIM_SPACES)
      .enable(CsvParser.Feature.SKIP_EMPTY_LINES);

  /** Vidur's element-wise operators of a decoder layer ({@code post_attention_layernorm} may be absent). */
  private static final List<String> ELEMENTWISE_OPS =
      List.of("input_layernorm", "attn_rope", "post_attention_layernorm", "mlp_act", "add");

  /** The GEMMs of Vidur's {@code mlp.csv}, in a layer's order. */
  private static final List<String> GEMM_OPS = List.of("attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj");

  private KernelProfile() {}

  /**
   * Reads every profile file under the given paths: a directory is searched for {@code mlp.csv},
   * {@code all_reduce.csv} and CSV files of the simple format (others are skipped); a file is read as
   * what its name and header say.
   *
   * @throws IllegalArgumentException naming the file (and line) when a path does not exist, a file
   *     is empty, binary or malformed, a time is not in (0, 10 s], or nothing usable was found
   */
  public static KernelProfile read(List<Path> from) {
    KernelProfile p = new KernelProfile();
    for (Path root : from) {
      if (!Files.exists(root)) {
        throw new IllegalArgumentException("--from " + root + ": no such file or directory");
      }
      List<Path> files;
      if (Files.isDirectory(root)) {
        try (Stream<Path> s = Files.walk(root)) {
          files = s.filter(Files::isRegularFile).filter(f -> csvName(f) != null).sorted().toList();
        } catch (IOException e) {
          throw new IllegalArgumentException("--from " + root + ": cannot list: " + e.getMessage(), e);
        }
      } else {
        files = List.of(root);
      }
      for (Path f : files) {
        p.readFile(f, !Files.isDirectory(root));
      }
    }
    if (p.gemms.isEmpty() && p.allReduces.isEmpty() && p.attention.isEmpty()) {
      throw new IllegalArgumentException("--from " + from + ": no kernel timings found (expected mlp.csv,"
          + " all_reduce.csv or CSV files with a 'kind' column; format: docs/gpu-efficiency.md)");
    }
    return p;
  }

  /** The file's name without {@code .gz} when it names a CSV file ({@code .csv}, {@code .csv.gz}), else null. */
  private static String csvName(Path f) {
    String name = f.getFileName().toString();
    String plain = name.endsWith(".gz") ? name.substring(0, name.length() - 3) : name;
    return plain.endsWith(".csv") ? plain : null;
  }

  private void readFile(Path f, boolean named) {
    String name = csvName(f) == null ? f.getFileName().toString() : csvName(f);
    List<Map<String, String>> rows = rows(f);
    if (rows.isEmpty()) {
      if (named) {
        throw new IllegalArgumentException(f + ": no rows");
      }
      return;
    }
    Map<String, String> first = rows.get(0);
    int before = size();
    if (first.containsKey("kind")) {
      readSimple(f, rows);
    } else if (name.equals("mlp.csv") || first.containsKey("time_stats.mlp_up_proj.median")) {
      readVidurCompute(f, rows);
    } else if (name.equals("all_reduce.csv") || first.containsKey("time_stats.all_reduce.median")) {
      readVidurAllReduce(f, rows);
    } else if (named) {
      throw new IllegalArgumentException(f + ": not a kernel profile (expected a 'kind' column, Vidur's"
          + " mlp.csv or all_reduce.csv)");
    } else {
      return;
    }
    filesRead.put(f.toString(), size() - before);
  }

  private int size() {
    return gemms.size() + elementwise.size() + allReduces.size() + attention.size();
  }

  private static List<Map<String, String>> rows(Path f) {
    String text = f.getFileName().toString().endsWith(".gz") ? gunzip(f) : InputTrees.readText(f, "kernel profile");
    if (text.isBlank()) {
      throw new IllegalArgumentException(f + ": the file is empty; expected " + EXPECTED);
    }
    requireText(f, text);
    CsvSchema schema = CsvSchema.emptySchema().withHeader();
    List<Map<String, String>> out = new ArrayList<>();
    try (MappingIterator<Map<String, String>> it = CSV.readerFor(Map.class).with(schema).readValues(text)) {
      while (it.hasNextValue()) {
        out.add(it.nextValue());
      }
    } catch (IOException | RuntimeException e) {
      String why;
      if (e instanceof com.fasterxml.jackson.core.JacksonException j) {
        // a location the reader does not know (line -1) is left out
        why = j.getLocation() != null && j.getLocation().getLineNr() >= 1
            ? InputTrees.problem(j, "not a CSV file with a header")
            : "not a CSV file with a header: " + InputTrees.message(j);
      } else {
        why = "not a CSV file with a header: " + InputTrees.oneLine(String.valueOf(e.getMessage()));
      }
      throw new IllegalArgumentException(f + ": " + why, e);
    }
    return out;
  }

  /**
   * Refuses text holding a control character other than tab, line feed, carriage return and form
   * feed (a NUL, say): a binary file, not a CSV text file.
   */
  private static void requireText(Path f, String text) {
    int line = 1;
    int column = 1;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f') || c == 0x7F) {
        throw new IllegalArgumentException(String.format(Locale.ROOT, "%s: line %d, column %d: not a CSV text file:"
            + " it holds the control character U+%04X (is it a binary file?)", f, line, column, (int) c));
      }
      if (c == '\n') {
        line++;
        column = 1;
      } else {
        column++;
      }
    }
  }

  /** Largest decompressed profile accepted (Vidur's largest file is 1.2 MB). */
  private static final int MAX_TEXT_BYTES = 256 << 20;

  private static String gunzip(Path f) {
    try (java.io.InputStream in = new java.util.zip.GZIPInputStream(Files.newInputStream(f))) {
      byte[] b = in.readNBytes(MAX_TEXT_BYTES + 1);
      if (b.length > MAX_TEXT_BYTES) {
        throw new IllegalArgumentException(f + ": more than " + MAX_TEXT_BYTES + " bytes decompressed");
      }
      return new String(b, java.nio.charset.StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalArgumentException(f + ": cannot read gzip: " + InputTrees.oneLine(String.valueOf(e.getMessage())), e);
    }
  }

  private void readSimple(Path f, List<Map<String, String>> rows) {
    for (int i = 0; i < rows.size(); i++) {
      Row r = new Row(f, i + 2, rows.get(i));
      String kind = r.text("kind").toLowerCase(Locale.ROOT);
      switch (kind) {
        case "gemm" -> gemms.add(new Gemm(r.text("k") + "x" + r.text("n"), r.positiveInt("tokens"),
            r.positiveLong("k"), r.positiveLong("n"), r.time(), r.at()));
        case "elementwise" -> elementwise.add(new Elementwise("hidden " + r.text("hidden"),
            r.positiveInt("tokens"), r.positiveInt("hidden"), r.time()));
        case "allreduce" -> {
          int gpus = r.positiveInt("gpus");
          if (gpus < 2) {
            throw new IllegalArgumentException(r.where("gpus") + ": an all-reduce needs at least 2 GPUs, got " + gpus);
          }
          allReduces.add(new AllReduce(gpus, r.positiveLong("bytes"), r.time(), r.at()));
        }
        case "decode_attention" -> attention.add(new DecodeAttention(r.positiveInt("batch"),
            r.positiveInt("context"), r.positiveInt("kv_heads"), r.positiveInt("head_dim"), r.time()));
        default -> throw new IllegalArgumentException(r.where("kind") + ": unknown kind '" + InputTrees.oneLine(kind)
            + "' (expected gemm, elementwise, allreduce or decode_attention)");
      }
    }
  }

  private void readVidurCompute(Path f, List<Map<String, String>> rows) {
    for (int i = 0; i < rows.size(); i++) {
      Row r = new Row(f, i + 2, rows.get(i));
      int heads = r.positiveInt("n_head");
      int kvHeads = r.positiveInt("n_kv_head");
      int d = r.positiveInt("n_embd");
      int ffn = r.positiveInt("n_expanded_embd");
      boolean gated = Boolean.parseBoolean(r.text("use_gated_mlp"));
      int tokens = r.positiveInt("num_tokens");
      int tp = r.positiveInt("num_tensor_parallel_workers");
      if (d % heads != 0) {
        throw new IllegalArgumentException(r.where("n_embd") + ": hidden size " + d + " is not a multiple of "
            + heads + " heads");
      }
      long hd = d / heads;
      long q = hd * heads / tp;
      long kv = hd * Math.max(1, kvHeads / tp);
      long[][] shapes = {
          {d, q + 2 * kv},
          {q, d},
          {d, (gated ? 2L : 1L) * ffn / tp},
          {ffn / tp, d}};
      String model = f.getParent() == null ? "" : f.getParent().getFileName().toString();
      for (int g = 0; g < GEMM_OPS.size(); g++) {
        String op = GEMM_OPS.get(g);
        gemms.add(new Gemm(model + " tp" + tp + " " + op, tokens, shapes[g][0], shapes[g][1],
            r.millis("time_stats." + op + ".median"), r.at()));
      }
      double ew = 0;
      for (String op : ELEMENTWISE_OPS) {
        if (r.has("time_stats." + op + ".median")) {
          ew += r.millis("time_stats." + op + ".median");
        }
      }
      elementwise.add(new Elementwise(model + " tp" + tp, tokens, d, ew));
    }
  }

  private void readVidurAllReduce(Path f, List<Map<String, String>> rows) {
    for (int i = 0; i < rows.size(); i++) {
      Row r = new Row(f, i + 2, rows.get(i));
      int gpus = r.positiveInt("num_workers");
      // only collectives within one node: the link the node's GPUs share
      if (r.has("devices_per_node") && !r.text("devices_per_node").isEmpty()
          && r.positiveInt("devices_per_node") < gpus) {
        continue;
      }
      if (gpus >= 2) {
        allReduces.add(new AllReduce(gpus, r.positiveLong("size"), r.millis("time_stats.all_reduce.median"),
            r.at()));
      }
    }
  }

  /** The GEMM timings. */
  public List<Gemm> gemms() {
    return Collections.unmodifiableList(gemms);
  }

  /** The element-wise timings (per layer). */
  public List<Elementwise> elementwise() {
    return Collections.unmodifiableList(elementwise);
  }

  /** The all-reduce timings within one node. */
  public List<AllReduce> allReduces() {
    return Collections.unmodifiableList(allReduces);
  }

  /** The decode-attention timings. */
  public List<DecodeAttention> decodeAttention() {
    return Collections.unmodifiableList(attention);
  }

  /** Files read with the number of timings taken from each, by path. */
  public Map<String, Integer> filesRead() {
    return Collections.unmodifiableMap(filesRead);
  }

  /** One CSV row with typed accessors whose errors name the file, line and column. */
  private record Row(Path file, int line, Map<String, String> values) {

    String where(String column) {
      return file + ":" + line + ": column '" + column + "'";
    }

    /** The row, {@code FILE:LINE}. */
    String at() {
      return file + ":" + line;
    }

    boolean has(String column) {
      return values.containsKey(column);
    }

    String text(String column) {
      String v = values.get(column);
      if (v == null) {
        throw new IllegalArgumentException(file + ":" + line + ": missing column '" + column + "'");
      }
      return v.trim();
    }

    int positiveInt(String column) {
      long v = positiveLong(column);
      if (v > Integer.MAX_VALUE) {
        throw new IllegalArgumentException(where(column) + ": " + v + " is too large");
      }
      return (int) v;
    }

    long positiveLong(String column) {
      double v = parsed(column, "a whole number");
      if (!(v >= 1) || v != Math.rint(v) || v > 1e15) {
        throw new IllegalArgumentException(where(column) + ": expected a whole number >= 1, got '"
            + InputTrees.oneLine(text(column)) + "'");
      }
      return (long) v;
    }

    /**
     * The column's time, in microseconds: a number {@code > 0} of the column's unit ({@code unitUs}
     * microseconds, {@code unitWords} in messages), at most {@link #MAX_KERNEL_US}.
     */
    double time(String column, double unitUs, String unitWords) {
      double v = parsed(column, "a number");
      if (!(Double.isFinite(v) && v > 0)) {
        throw new IllegalArgumentException(where(column) + ": expected a time > 0, got '" + InputTrees.oneLine(text(column)) + "'");
      }
      if (v * unitUs > MAX_KERNEL_US) {
        throw new IllegalArgumentException(where(column) + ": expected a time in (0, "
            + String.format(Locale.ROOT, "%.0f", MAX_KERNEL_US / unitUs) + "] " + unitWords + " (10 s: no kernel of"
            + " a profile takes longer; is the unit right?), got '" + InputTrees.oneLine(text(column)) + "'");
      }
      return v * unitUs;
    }

    /** The column's text as a number; an error saying {@code expected} when it is none. */
    private double parsed(String column, String expected) {
      String t = text(column);
      try {
        return Double.parseDouble(t);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(where(column) + ": expected " + expected + ", got '" + InputTrees.oneLine(t) + "'");
      }
    }

    /** A time given in milliseconds (Vidur's unit), as microseconds. */
    double millis(String column) {
      return time(column, 1e3, "milliseconds");
    }

    /** The simple format's {@code time_us}. */
    double time() {
      return time("time_us", 1, "microseconds");
    }
  }
}
