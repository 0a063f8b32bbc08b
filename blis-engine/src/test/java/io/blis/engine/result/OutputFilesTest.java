package io.blis.engine.result;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OutputFilesTest {

  @Test
  void aWriteReplacesTheFileWholeAndLeavesNoTemporary(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("sub/dir/out.json");
    OutputFiles.write(f, "first\n");
    assertThat(f).hasContent("first");
    OutputFiles.write(f, "second, longer\n");
    assertThat(Files.readString(f)).isEqualTo("second, longer\n");
    assertThat(OutputFiles.temporary(f).getParent()).isEqualTo(dir.resolve("sub/dir"));
    assertThat(OutputFiles.temporary(f).getFileName().toString()).startsWith(".out.json.").endsWith(".blis-tmp");
    try (var s = Files.list(f.getParent())) {
      assertThat(s.map(p -> p.getFileName().toString())).containsExactly("out.json");
    }
  }

  @Test
  void aFailedWriteLeavesTheOldFileAndNoTemporary(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("out.json");
    Files.writeString(f, "old");
    // the text fails half-way: the write fails before the move
    assertThatThrownBy(() -> OutputFiles.write(f, w -> {
      w.write("ne");
      w.flush();
      throw new IOException("disk gone");
    })).isInstanceOf(IOException.class).hasMessage("disk gone");
    assertThat(f).hasContent("old");
    try (var s = Files.list(dir)) {
      assertThat(s.map(p -> p.getFileName().toString())).containsExactly("out.json");
    }
  }

  @Test
  void aStreamedOutputIsCommittedOrDiscarded(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("trace.jsonl.gz");
    Files.writeString(f, "old");
    Path tmp = OutputFiles.temporary(f);
    Files.writeString(tmp, "half");
    OutputFiles.discard(tmp);
    assertThat(tmp).doesNotExist();
    assertThat(f).hasContent("old");
    OutputFiles.discard(tmp); // nothing to discard: no error
    Files.writeString(tmp, "whole");
    OutputFiles.commit(tmp, f);
    assertThat(f).hasContent("whole");
    assertThat(tmp).doesNotExist();
  }

  /** The shutdown hook discards what is opened and not yet committed or discarded, nothing else. */
  @Test
  void openedTemporariesAreRememberedUntilCommittedOrDiscarded(@TempDir Path dir) throws Exception {
    Path a = dir.resolve("a.json");
    Path tmpA = OutputFiles.temporary(a);
    Path tmpB = OutputFiles.temporary(dir.resolve("b.json"));
    OutputFiles.open(tmpA).close();
    OutputFiles.open(tmpB).close();
    assertThat(OutputFiles.unfinished()).contains(tmpA.toAbsolutePath(), tmpB.toAbsolutePath());
    OutputFiles.commit(tmpA, a);
    OutputFiles.discard(tmpB);
    assertThat(a).exists();
    assertThat(OutputFiles.unfinished()).doesNotContain(tmpA.toAbsolutePath(), tmpB.toAbsolutePath());
  }
}
