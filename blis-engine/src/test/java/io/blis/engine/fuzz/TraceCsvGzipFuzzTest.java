package io.blis.engine.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.GZIPOutputStream;

/**
 * {@code blis replay --trace FILE.gz}: the input gzip-compressed, read as {@link TraceCsvFuzzTest}
 * reads a plain trace. An input that starts with a zero byte is a truncated download: the rest is
 * compressed and the stream cut where the second byte says.
 */
class TraceCsvGzipFuzzTest extends ParserFuzzing {

  @FuzzTest
  void fuzz(byte[] in) throws Exception {
    if (!counted(getClass(), in)) {
      return;
    }
    boolean cut = in.length >= 2 && in[0] == 0;
    byte[] plain = cut ? Arrays.copyOfRange(in, 2, in.length) : in;
    byte[] gz = gzip(plain);
    if (cut) {
      gz = Arrays.copyOf(gz, (in[1] & 0xff) % gz.length);
    }
    Path file = Files.write(scratch("trace.csv.gz"), gz);
    TraceCsvFuzzTest.replay(file, text(plain));
  }

  private static byte[] gzip(byte[] in) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (OutputStream out = new GZIPOutputStream(bytes)) {
      out.write(in);
    }
    return bytes.toByteArray();
  }
}
