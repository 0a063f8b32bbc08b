package io.blis.bench;

import io.blis.kvcache.BlockTable;
import io.blis.kvcache.KvBlockPool;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Time of the KV-cache operations the scheduler performs, in nanoseconds per call, on a pool the
 * size of Llama-2-7B on one H100 (7462 blocks of 16 tokens) of which 96 running requests hold
 * 4320 blocks (58%).
 *
 * <ul>
 *   <li>{@link #admitAndFree}: look up the cached prefix of a 592-token prompt whose first 6 blocks
 *       (a 100-token system prompt, as the codegen ground truth) are shared by every prompt, admit
 *       it (claim the cached blocks, allocate and register the rest) and free it again. The
 *       prompts rotate over 1024 distinct questions, so their own blocks have been evicted by the
 *       time they come back and every admission also evicts old cached blocks.
 *   <li>{@link #growByOneDecodeToken}: one decode token for one of 96 running requests in turn (a
 *       new block every 16th call); a request that reached 1024 tokens is freed and readmitted.
 *   <li>{@link #cachedPrefixLookup}: the router's question "how many leading blocks of this prompt
 *       are cached here".
 * </ul>
 *
 * <p>No call allocates (the block tables are created in the setup).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class KvCacheBenchmark {

  static final int TOTAL_BLOCKS = 7462;
  static final int BLOCK_TOKENS = 16;
  static final int SHARED_PREFIX_TOKENS = 100;
  static final int PROMPT_TOKENS = 592;
  static final int DISTINCT_PROMPTS = 1024;
  static final int RUNNING = 96;
  static final int MAX_TOKENS = 1024;

  KvBlockPool pool;
  private BlockTable[] waiting;
  private int nextWaiting;
  private BlockTable[] running;
  private int[] runningTokens;
  private int nextRunning;

  @Setup(Level.Trial)
  public void setUp() {
    pool = new KvBlockPool(TOTAL_BLOCKS, BLOCK_TOKENS);
    SplittableRandom rnd = new SplittableRandom(20260217L);
    int[] shared = new int[SHARED_PREFIX_TOKENS];
    for (int i = 0; i < shared.length; i++) {
      shared[i] = 3 + rnd.nextInt(31997);
    }
    waiting = new BlockTable[DISTINCT_PROMPTS];
    for (int p = 0; p < DISTINCT_PROMPTS; p++) {
      waiting[p] = pool.newTable(prompt(shared, rnd), PROMPT_TOKENS);
    }
    // Running requests: distinct prompts at staggered decode progress, about 48 blocks each.
    running = new BlockTable[RUNNING];
    runningTokens = new int[RUNNING];
    for (int r = 0; r < RUNNING; r++) {
      running[r] = pool.newTable(prompt(shared, rnd), MAX_TOKENS);
      runningTokens[r] = PROMPT_TOKENS + (r * 331) % (MAX_TOKENS - PROMPT_TOKENS);
      admit(running[r], runningTokens[r]);
    }
  }

  private static int[] prompt(int[] shared, SplittableRandom rnd) {
    int[] tokens = new int[PROMPT_TOKENS];
    System.arraycopy(shared, 0, tokens, 0, shared.length);
    for (int i = shared.length; i < tokens.length; i++) {
      tokens[i] = 3 + rnd.nextInt(31997);
    }
    return tokens;
  }

  private int admit(BlockTable table, int tokens) {
    int cached = Math.min(pool.cachedPrefixBlocks(table), (PROMPT_TOKENS - 1) / BLOCK_TOKENS);
    if (!pool.admit(table, cached, tokens)) {
      throw new IllegalStateException("pool full: " + pool.freeBlocks() + " free blocks");
    }
    return cached;
  }

  /** Prefix lookup, admission of a whole prompt and release; returns the cached blocks. */
  @Benchmark
  public int admitAndFree() {
    BlockTable t = waiting[nextWaiting];
    nextWaiting = (nextWaiting + 1) % DISTINCT_PROMPTS;
    int cached = admit(t, PROMPT_TOKENS);
    pool.free(t);
    return cached;
  }

  /** One decode token for the next running request; returns its blocks. */
  @Benchmark
  public int growByOneDecodeToken() {
    int r = nextRunning;
    nextRunning = (r + 1) % RUNNING;
    BlockTable t = running[r];
    int tokens = runningTokens[r] + 1;
    if (tokens > MAX_TOKENS) {
      pool.free(t);
      tokens = PROMPT_TOKENS;
      admit(t, tokens);
    } else if (!pool.grow(t, tokens)) {
      throw new IllegalStateException("pool full: " + pool.freeBlocks() + " free blocks");
    }
    runningTokens[r] = tokens;
    return t.numBlocks();
  }

  /** Leading cached blocks of the next waiting prompt (the shared prefix, mostly). */
  @Benchmark
  public int cachedPrefixLookup() {
    BlockTable t = waiting[nextWaiting];
    nextWaiting = (nextWaiting + 1) % DISTINCT_PROMPTS;
    return pool.cachedPrefixBlocks(t);
  }
}
