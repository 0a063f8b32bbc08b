package io.blis.workload.spec;

import io.blis.workload.synthetic.LengthDistribution;
import io.blis.workload.synthetic.LengthSpec;
import java.util.List;

/**
 * Named length presets (Gaussian prompt and output lengths, tokens: mean/std/min/max), as in the
 * original BLIS defaults.
 */
final class Presets {

  static final List<String> NAMES = List.of("chatbot", "summarization", "contentgen", "multidoc");

  private Presets() {}

  static LengthDistribution input(String preset) {
    return switch (preset) {
      case "chatbot" -> new LengthSpec(256, 100, 2, 800);
      case "contentgen" -> new LengthSpec(1024, 150, 10, 2048);
      case "summarization" -> new LengthSpec(4096, 500, 100, 8192);
      case "multidoc" -> new LengthSpec(10240, 1200, 500, 20480);
      default -> throw new IllegalArgumentException("unknown preset " + preset);
    };
  }

  static LengthDistribution output(String preset) {
    return switch (preset) {
      case "chatbot" -> new LengthSpec(256, 100, 1, 1024);
      case "contentgen" -> new LengthSpec(1024, 200, 10, 2048);
      case "summarization" -> new LengthSpec(512, 150, 10, 2048);
      case "multidoc" -> new LengthSpec(1536, 300, 50, 4096);
      default -> throw new IllegalArgumentException("unknown preset " + preset);
    };
  }
}
