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
  /** 1-based character column where each field starts; null when not tracked. */
  private final int[] starts;

  CsvFields(String file, int line, List<String> columns, String text) {
    this.file = file;
    this.line = line;
    this.columns = columns;
    this.values = text.split(",", -1);
    this.starts = null;
    if (values.length != columns.size()) {
      throw new IllegalArgumentException(
          file + ":" + line + ": expected " + columns.size() + " fields (" + String.join(",", columns)
              + "), got " + values.length);
    }
  }

  /**
   * The fields of a CSV line whose values may be double-quoted (RFC 4180: a quoted value may hold
   * commas, and {@code ""} stands for a quote); errors name the line and the column where the field
   * starts. The line must have one field per column.
   */
  static CsvFields quoted(String file, int line, List<String> columns, String text) {
    List<String> values = new java.util.ArrayList<>();
    List<Integer> starts = new java.util.ArrayList<>();
    int i = 0;
    int n = text.length();
    while (true) {
      starts.add(i + 1);
      StringBuilder v = new StringBuilder();
      if (i < n && text.charAt(i) == '"') {
        int open = i++;
        while (true) {
          if (i >= n) {
            throw new IllegalArgumentException(file + ":" + line + ":" + (open + 1)
                + ": a quoted field has no closing quote (a field may not span lines)");
          }
          char c = text.charAt(i++);
          if (c == '"') {
            if (i < n && text.charAt(i) == '"') {
              v.append('"');
              i++;
            } else {
              break;
            }
          } else {
            v.append(c);
          }
        }
        if (i < n && text.charAt(i) != ',') {
          throw new IllegalArgumentException(file + ":" + line + ":" + (i + 1)
              + ": expected a comma after the closing quote");
        }
      } else {
        while (i < n && text.charAt(i) != ',') {
          v.append(text.charAt(i++));
        }
      }
      values.add(v.toString());
      if (i >= n) {
        break;
      }
      i++; // the comma
    }
    if (values.size() != columns.size()) {
      throw new IllegalArgumentException(file + ":" + line + ": expected " + columns.size()
          + " fields (" + String.join(",", columns) + "), got " + values.size());
    }
    return new CsvFields(file, line, columns, values.toArray(String[]::new),
        starts.stream().mapToInt(Integer::intValue).toArray());
  }

  private CsvFields(String file, int line, List<String> columns, String[] values, int[] starts) {
    this.file = file;
    this.line = line;
    this.columns = columns;
    this.values = values;
    this.starts = starts;
  }

  IllegalArgumentException error(int column, String expectation) {
    return new IllegalArgumentException(
        file + ":" + line + (starts == null ? "" : ":" + starts[column]) + ": field '"
            + columns.get(column) + "' = '" + TextFiles.quote(values[column]) + "': " + expectation);
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
