package io.blis.workload.trace;

import io.blis.workload.TextFiles;
import java.util.List;

/**
 * The fields of one CSV line (no quoting: the formats of this package never contain commas in
 * values), with typed accessors whose errors name the file, line and column.
 */
final class CsvFields {

  private final String file;
  private final int line;
  private final List<String> columns;
  private final String[] values;

  CsvFields(String file, int line, List<String> columns, String text) {
    this.file = file;
    this.line = line;
    this.columns = columns;
    this.values = text.split(",", -1);
    if (values.length != columns.size()) {
      throw new IllegalArgumentException(
          file + ":" + line + ": expected " + columns.size() + " fields (" + String.join(",", columns)
              + "), got " + values.length);
    }
  }

  IllegalArgumentException error(int column, String expectation) {
    return new IllegalArgumentException(
        file + ":" + line + ": field '" + columns.get(column) + "' = '"
            + TextFiles.quote(values[column]) + "': " + expectation);
  }

  boolean isEmpty(int column) {
    return values[column].isEmpty();
  }

  String string(int column) {
    return values[column];
  }

  long longValue(int column) {
    try {
      long v = Long.parseLong(values[column].strip());
      if (v < 0) {
        throw error(column, "expected a non-negative integer");
      }
      return v;
    } catch (NumberFormatException e) {
      throw error(column, "expected a non-negative integer");
    }
  }

  long longValueAllowMinusOne(int column) {
    try {
      long v = Long.parseLong(values[column].strip());
      if (v < -1) {
        throw error(column, "expected a non-negative integer or -1");
      }
      return v;
    } catch (NumberFormatException e) {
      throw error(column, "expected an integer");
    }
  }

  int intValue(int column, int min) {
    return intValue(column, min, Integer.MAX_VALUE, "");
  }

  /**
   * An integer in [min, max]; {@code bound} (may be empty) says in the error what the maximum
   * stands for.
   */
  int intValue(int column, int min, int max, String bound) {
    long v = longValue(column, min, max, bound);
    return (int) v;
  }

  /** An integer in [min, max]; {@code bound} (may be empty) says what the maximum stands for. */
  long longValue(int column, long min, long max, String bound) {
    long v;
    try {
      v = Long.parseLong(values[column].strip());
    } catch (NumberFormatException e) {
      throw outOfRange(column, min, max, bound);
    }
    if (v < min || v > max) {
      throw outOfRange(column, min, max, bound);
    }
    return v;
  }

  /** Built only on error: a ground-truth trace has tens of thousands of rows. */
  private IllegalArgumentException outOfRange(int column, long min, long max, String bound) {
    return error(column, "expected an integer in [" + min + ", " + max + "]"
        + (bound.isEmpty() ? "" : " (" + bound + ")"));
  }

  /** A finite number in [0, max]; {@code bound} says what the maximum stands for. */
  double nonNegativeDouble(int column, double max, String bound) {
    double v = nonNegativeDouble(column);
    if (v > max) {
      throw error(column, "expected a number in [0, " + max + "] (" + bound + ")");
    }
    return v;
  }

  double nonNegativeDouble(int column) {
    double v;
    try {
      v = Double.parseDouble(values[column].strip());
    } catch (NumberFormatException e) {
      throw error(column, "expected a non-negative number");
    }
    if (!(v >= 0) || !Double.isFinite(v)) {
      throw error(column, "expected a non-negative finite number");
    }
    return v;
  }
}
