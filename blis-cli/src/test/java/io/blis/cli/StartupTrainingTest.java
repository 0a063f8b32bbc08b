package io.blis.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class StartupTrainingTest {

  @Test
  void commandLinesAreSeparatedBySemicolonArgumentsAndEmptyOnesDropped() {
    assertThat(StartupTraining.split(new String[] {";", "run", ";", ";", "replay", "--trace", "t.csv", ";"}))
        .containsExactly(List.of("run"), List.of("replay", "--trace", "t.csv"));
    assertThat(StartupTraining.split(new String[] {"run", "--rate", "5;6"}))
        .containsExactly(List.of("run", "--rate", "5;6"));
    assertThat(StartupTraining.split(new String[0])).isEmpty();
  }
}
