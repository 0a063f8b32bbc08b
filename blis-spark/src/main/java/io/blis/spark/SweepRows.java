package io.blis.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.blis.cli.sweep.SweepGrid;
import io.blis.cli.sweep.SweepTable;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The sweep table as Spark rows: one column per table column, in the same order, nullable;
 * whole numbers as {@code long}, other numbers as {@code double}, flags as {@code boolean}, the
 * rest as {@code string}. A missing value (an empty CSV cell, a JSON {@code null}) is a null.
 */
final class SweepRows {

  static final Set<String> WHOLE = Set.of("index", "tp", "pp", "dp", "ep", "replicas", "gpus", "max_num_seqs",
      "max_num_batched_tokens", "points_simulated", "measured", "completed");
  static final Set<String> FLAGS = Set.of("capacity_lower_bound", "saturation_lower_bound", "meets_slo",
      "steady", "example_price", "pareto", "best");
  static final Set<String> TEXT = Set.of("key", "model", "gpu", "router", "scheduler", "status", "reason",
      "violations", "price_source", "note");

  private SweepRows() {}

  /** The Spark type of a table column: every column not whole, a flag or text is a number. */
  static DataType type(String column) {
    if (WHOLE.contains(column)) {
      return DataTypes.LongType;
    }
    if (FLAGS.contains(column)) {
      return DataTypes.BooleanType;
    }
    if (TEXT.contains(column)) {
      return DataTypes.StringType;
    }
    return DataTypes.DoubleType;
  }

  /** The schema of a question's table. */
  static StructType schema(SweepGrid.Question question) {
    List<StructField> fields = new ArrayList<>();
    for (String c : SweepTable.columns(question)) {
      fields.add(DataTypes.createStructField(c, type(c), true));
    }
    return DataTypes.createStructType(fields);
  }

  /** The table's rows, in its order. */
  static List<Row> rows(SweepTable table) {
    List<Row> out = new ArrayList<>();
    for (ObjectNode r : table.rows()) {
      Object[] values = new Object[table.columns().size()];
      for (int i = 0; i < values.length; i++) {
        String c = table.columns().get(i);
        values[i] = value(c, r.get(c));
      }
      out.add(RowFactory.create(values));
    }
    return out;
  }

  private static Object value(String column, JsonNode v) {
    if (v == null || v.isNull()) {
      return null;
    }
    DataType t = type(column);
    boolean fits = t == DataTypes.LongType ? v.isIntegralNumber() && v.canConvertToLong()
        : t == DataTypes.BooleanType ? v.isBoolean()
        : t == DataTypes.StringType ? v.isTextual()
        : v.isNumber();
    if (!fits) {
      throw new IllegalStateException("sweep column " + column + " holds " + v + ", not a " + t.simpleString());
    }
    return t == DataTypes.LongType ? (Object) v.asLong()
        : t == DataTypes.BooleanType ? (Object) v.asBoolean()
        : t == DataTypes.StringType ? v.asText()
        : (Object) v.asDouble();
  }
}
