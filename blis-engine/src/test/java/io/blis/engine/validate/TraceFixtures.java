package io.blis.engine.validate;

import io.blis.engine.result.RequestRecord;
import io.blis.workload.RequestOutcome;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPInputStream;

/** Test helpers: ground-truth traces as request records, and hand-made records. */
final class TraceFixtures {

  private TraceFixtures() {}

  static Path resource(String name) {
    try {
      return Path.of(TraceFixtures.class.getResource("/validate/" + name).toURI());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** Reads a ground-truth trace (gzip CSV) as records of what the client observed. */
  static List<RequestRecord> read(Path csvGz, int outputLen) {
    List<RequestRecord> out = new ArrayList<>();
    try (BufferedReader r = new BufferedReader(new InputStreamReader(
        new GZIPInputStream(Files.newInputStream(csvGz)), StandardCharsets.UTF_8))) {
      String header = r.readLine();
      if (!header.startsWith("req,stage,arrival_ms,ok")) {
        throw new IllegalStateException("unexpected header " + header);
      }
      String line;
      while ((line = r.readLine()) != null) {
        String[] f = line.split(",", -1);
        boolean ok = f[3].equals("1");
        long arrivalUs = Math.round(Double.parseDouble(f[2]) * 1000);
        long e2eUs = Math.round(Double.parseDouble(f[6]) * 1000);
        long ttftUs = ok ? Math.round(Double.parseDouble(f[7]) * 1000) : -1;
        out.add(new RequestRecord(Long.parseLong(f[0]), Integer.parseInt(f[1]), arrivalUs,
            ok ? Integer.parseInt(f[4]) : 0, ok ? outputLen : 0,
            ok ? RequestOutcome.COMPLETED : RequestOutcome.TIMED_OUT, ttftUs, e2eUs, -1, 0, 0, ""));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  static RequestRecord completed(long id, int stage, long arrivalUs, long ttftUs, long e2eUs) {
    return new RequestRecord(id, stage, arrivalUs, 100, 10, RequestOutcome.COMPLETED, ttftUs, e2eUs, 0, 0, 0, "");
  }

  static RequestRecord timedOut(long id, int stage, long arrivalUs, long e2eUs) {
    return new RequestRecord(id, stage, arrivalUs, 100, 0, RequestOutcome.TIMED_OUT, -1, e2eUs, -1, 0, 0, "");
  }
}
