package io.blis.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.blis.engine.InstanceFootprint;
import org.junit.jupiter.api.Test;

/**
 * The bounds derived from the Java heap's size, as pure functions: the default --max-backlog and the
 * refusal of instances that do not fit (computed for heaps of given sizes, none filled).
 */
class HeapBudgetTest {

  private static final long MIB = 1L << 20;
  private static final long GIB = 1L << 30;
  /** One instance of the default deployment (Llama-2-7B on an H100, 7,462 KV blocks). */
  private static final long ONE = InstanceFootprint.of(7462, 0);

  @Test
  void theDefaultBacklogIsWhatFitsInThreeQuartersOfTheHeapBesideTheInstances() {
    // 2 GiB: (0.75 x 2 GiB - 528,336) / 2,500 bytes a waiting request
    assertThat(HeapBudget.defaultMaxBacklog(2 * GIB, ONE)).isEqualTo((long) ((0.75 * 2 * GIB - ONE) / 2500))
        .isEqualTo(644_033);
    assertThat(HeapBudget.defaultMaxBacklog(512 * MIB, ONE)).isEqualTo(160_849);
    // with 4 GiB and more, the 1,000,000 of before
    assertThat(HeapBudget.defaultMaxBacklog(4 * GIB, ONE)).isEqualTo(1_000_000);
    assertThat(HeapBudget.defaultMaxBacklog(Long.MAX_VALUE, ONE)).isEqualTo(1_000_000);
    // instances take their share first
    assertThat(HeapBudget.defaultMaxBacklog(2 * GIB, 1000 * ONE)).isEqualTo((long) ((0.75 * 2 * GIB - 1000 * ONE) / 2500))
        .isLessThan(HeapBudget.defaultMaxBacklog(2 * GIB, ONE));
    // never below 1,000, however little is left
    assertThat(HeapBudget.defaultMaxBacklog(2 * GIB, 2 * GIB)).isEqualTo(1_000);
    assertThat(HeapBudget.defaultMaxBacklog(16 * MIB, ONE)).isEqualTo(4_821);
  }

  /**
   * The tester's figures: with a 2 GiB heap, the backlog of 1,000,000 requests of 512-token prompts
   * (about 2.3 GB measured) ran out of memory; the derived default keeps it to about 1.5 GB.
   */
  @Test
  void theDerivedBacklogAtTwoGibibytesHoldsWhatTheHeapCanHold() {
    long backlog = HeapBudget.defaultMaxBacklog(2 * GIB, ONE);
    assertThat(backlog * HeapBudget.BYTES_PER_WAITING_REQUEST + ONE).isLessThanOrEqualTo((long) (0.75 * 2 * GIB));
    assertThat(1_000_000 * HeapBudget.BYTES_PER_WAITING_REQUEST).isGreaterThan(2 * GIB);
  }

  @Test
  void instancesThatDoNotFitInNineTenthsOfTheHeapAreRefusedNamingTheFlagAndTheFigures() {
    InstanceFootprint f = new InstanceFootprint(4096, 4096 * ONE, 7462, 7462);
    String refusal = HeapBudget.instancesRefusal("--num-instances 4096", f, 2 * GIB);
    assertThat(refusal).isEqualTo("--num-instances 4096: 4,096 instances of 7,462 KV blocks need about 2.0 GiB of heap"
        + " before any request (about 516 KiB each: the blocks' tables and index, the instance's state), more than the"
        + " 1.8 GiB (90%) they may take of the Java heap's 2.0 GiB; give at most 3,658 instances of these, or more heap"
        + " (e.g. BLIS_JAVA_OPTS=-Xmx4g)");
    assertThat(3658 * ONE).isLessThanOrEqualTo((long) (0.9 * 2 * GIB));
    assertThat(3659 * ONE).isGreaterThan((long) (0.9 * 2 * GIB));
    // with the heap the suggestion names, they fit
    assertThat(HeapBudget.instancesRefusal("--num-instances 4096", f, 4 * GIB)).isNull();
    // 3,400 instances ran in 2 GiB (1.68 GB live): not refused
    assertThat(HeapBudget.instancesRefusal("x", new InstanceFootprint(3400, 3400 * ONE, 7462, 7462), 2 * GIB)).isNull();
  }

  @Test
  void oneInstanceTooLargeForAnyCountNamesItsBlocks() {
    long bytes = InstanceFootprint.of(1L << 29, 0);
    String refusal = HeapBudget.instancesRefusal("--total-kv-blocks 536870912",
        new InstanceFootprint(1, bytes, 1L << 29, 1L << 29), 8 * GIB);
    // 29 bytes a block in arrays, and an index of 2^29 slots (16 bytes each) that holds them
    assertThat(bytes).isEqualTo(InstanceFootprint.PER_INSTANCE_BYTES + 512 + 29L * (1 << 29) + 7 * 16 + 16 + (8L << 30));
    assertThat(refusal).isEqualTo("--total-kv-blocks 536870912: 1 instance of 536,870,912 KV blocks needs about 22.5 GiB"
        + " of heap before any request (the blocks' tables and index, the instance's state), more than the 7.2 GiB (90%)"
        + " it may take of the Java heap's 8.0 GiB; give fewer KV blocks (--total-kv-blocks), or more heap (e.g."
        + " BLIS_JAVA_OPTS=-Xmx32g)");
  }

  @Test
  void sizesAreReadable() {
    assertThat(HeapBudget.size(1536)).isEqualTo("2 KiB");
    assertThat(HeapBudget.size(5 * MIB)).isEqualTo("5 MiB");
    assertThat(HeapBudget.size(3 * GIB / 2)).isEqualTo("1.5 GiB");
  }
}
