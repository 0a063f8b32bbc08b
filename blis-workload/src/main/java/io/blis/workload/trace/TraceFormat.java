package io.blis.workload.trace;

import java.util.ArrayList;
import java.util.List;

/** Column layout of BLIS trace files, shared by {@link TraceWriter} and {@link TraceReader}. */
final class TraceFormat {

  static final String MAGIC = "# blis-trace ";

  static final List<String> COLUMNS = List.of(
      "id", "arrival_us", "input_tokens", "output_tokens", "prefix_group", "prefix_length",
      "content_id", "session_id", "round", "slo_class", "tenant", "stage", "timeout_us");

  static final String TOKEN_COLUMN = "token_ids";

  /** The column of the model each request names, after {@code timeout_us}, in traces of such workloads. */
  static final String MODEL_COLUMN = "model";

  /**
   * The column of the LoRA adapter each request names, after {@code timeout_us} (and {@code
   * model}), in traces of such workloads.
   */
  static final String ADAPTER_COLUMN = "adapter";

  private TraceFormat() {}

  static List<String> columns(boolean tokenIds) {
    return columns(tokenIds, false, false);
  }

  static List<String> columns(boolean tokenIds, boolean models) {
    return columns(tokenIds, models, false);
  }

  static List<String> columns(boolean tokenIds, boolean models, boolean adapters) {
    if (!tokenIds && !models && !adapters) {
      return COLUMNS;
    }
    List<String> all = new ArrayList<>(COLUMNS);
    if (models) {
      all.add(MODEL_COLUMN);
    }
    if (adapters) {
      all.add(ADAPTER_COLUMN);
    }
    if (tokenIds) {
      all.add(TOKEN_COLUMN);
    }
    return List.copyOf(all);
  }
}
