package io.blis.workload.trace;

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
        file + ":" + line + ": field '" + columns.get(column) + "' = '" + values[column] + "': "
            + expectation);
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
    long v = longValue(column);
    if (v < min || v > Integer.MAX_VALUE) {
      throw error(column, "expected an integer in [" + min + ", " + Integer.MAX_VALUE + "]");
    }
    return (int) v;
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
