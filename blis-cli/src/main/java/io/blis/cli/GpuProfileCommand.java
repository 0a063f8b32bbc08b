package io.blis.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.GpuEfficiency;
import io.blis.latency.catalog.GpuSpec;
import io.blis.latency.coeff.InputTrees;
import io.blis.latency.profile.EfficiencyFit;
import io.blis.latency.profile.KernelProfile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code blis gpu-profile}: derives a GPU's kernel-efficiency entry from per-operator timings and
 * writes a GPU file that {@code --gpu} takes (or an entry of an efficiency table).
 */
@Command(
    name = "gpu-profile",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {"Derive a GPU's kernel efficiency (GEMM bandwidth and FLOP shares, fixed kernel times,"
        + " element-wise and all-reduce costs, decode attention) from per-operator timings, and write a GPU file"
        + " that --gpu takes.",
        "Timings: Vidur's profile layout (compute/<gpu>/<org>/<model>/mlp.csv, network/<gpu>_<topology>/"
            + "all_reduce.csv) or CSV files with a 'kind' column (docs/gpu-efficiency.md)."})
final class GpuProfileCommand implements Callable<Integer> {

  private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  @Spec CommandSpec spec;

  @Option(names = "--from", required = true, paramLabel = "PATH",
      description = "A directory searched for profile CSV files, or one file (repeatable: e.g. the compute"
          + " folder and the network folder of one GPU).")
  List<Path> from;

  @Option(names = {"--gpu", "--hardware"}, required = true, paramLabel = "NAME|JSON",
      description = "The profiled GPU's datasheet (bundled name or GPU file): the peaks the shares are taken"
          + " of, and what the written GPU file carries beside its efficiency.")
  String gpu;

  @Option(names = "--name", paramLabel = "NAME", description = "Name of the written GPU (default: the --gpu's).")
  String name;

  @Option(names = "--out", paramLabel = "FILE",
      description = "Write the GPU file here (default: standard output).")
  Path out;

  @Option(names = "--table", paramLabel = "FILE",
      description = "Instead, put the efficiency entry under the GPU's name into this efficiency table (a JSON"
          + " object of entries, created if missing; other entries are kept).")
  Path table;

  @Option(names = "--source", paramLabel = "TEXT",
      description = "Where the timings come from, in words, recorded in the entry (default: the --from paths).")
  String source;

  @Override
  public Integer call() throws Exception {
    if (out != null) {
      Cli.requireWritable("--out", out);
    }
    if (table != null) {
      Cli.requireWritable("--table", table);
    }
    if (out != null && table != null) {
      throw new IllegalArgumentException("--out and --table: give one of them");
    }
    GpuSpec base = GpuCatalog.resolve(gpu);
    String entryName = name == null ? base.name() : name;
    KernelProfile profile = KernelProfile.read(from);
    String from = source != null ? source : "timings in " + String.join(", ", this.from.stream().map(Path::toString).toList());
    GpuEfficiency e = EfficiencyFit.fit(profile, base, from);
    if (table != null) {
      ObjectNode root = JSON.createObjectNode();
      if (Files.exists(table)) {
        JsonNode old = InputTrees.json(InputTrees.readText(Cli.requireFile("--table", table), "efficiency table"),
            table.toString());
        if (old != null && !old.isObject()) {
          throw new IllegalArgumentException("--table " + table + ": expected a JSON object of efficiency entries");
        }
        if (old != null) {
          Iterator<Map.Entry<String, JsonNode>> it = old.fields();
          while (it.hasNext()) {
            Map.Entry<String, JsonNode> f = it.next();
            root.set(f.getKey(), f.getValue());
          }
        }
      }
      root.set(entryName, e.toJson());
      Cli.write("--table", table, JSON.writeValueAsString(root) + "\n");
    } else {
      GpuSpec written = new GpuSpec(entryName, base.peakFlopsBf16(), base.peakFlopsFp8(),
          base.memoryBandwidthBytesPerS(), base.memoryBytes(), base.interconnectBandwidthBytesPerS(),
          base.gpusPerNode(), base.interNodeBandwidthBytesPerS(), base.interconnectLatencyS(),
          base.interNodeLatencyS(), e);
      String text = JSON.writeValueAsString(GpuCatalog.toJson(written)) + "\n";
      if (out != null) {
        Cli.write("--out", out, text);
      } else {
        spec.commandLine().getOut().print(text);
        spec.commandLine().getOut().flush();
      }
    }
    List<String> summary = new ArrayList<>();
    summary.add(String.format(java.util.Locale.ROOT,
        "%s: GEMM bandwidth %.3f of peak (fixed %.2f us), FLOPs %.3f of peak, decode GEMM cost %.3f x FLOPs at"
            + " peak, element-wise %.2f us per 1000 hidden, decode attention %.3f", entryName,
        e.gemmBandwidthFraction(), e.gemmFixedUs(), e.gemmFlopsFraction(), e.decodeGemmCost(),
        e.elementwiseUsPerKiloHidden(), e.decodeAttentionFraction()));
    for (GpuEfficiency.AllReduce a : e.allReduce()) {
      summary.add(String.format(java.util.Locale.ROOT, "  all-reduce over %d: %.1f us up to 1 MiB, bus bandwidth"
          + " %.3f of the link", a.gpus(), a.latencyUs(), a.busBandwidthFraction()));
    }
    summary.forEach(spec.commandLine().getErr()::println);
    spec.commandLine().getErr().flush();
    return 0;
  }
}
