package io.blis.bench;

import io.blis.api.ClusterView;
import io.blis.api.Coefficients;
import io.blis.api.InstanceSnapshot;
import io.blis.api.Providers;
import io.blis.api.Router;
import io.blis.api.RouterProvider;
import io.blis.engine.Context;
import io.blis.engine.Deployment;
import io.blis.engine.EngineLimits;
import io.blis.kvcache.BlockHashes;
import io.blis.latency.catalog.GpuCatalog;
import io.blis.latency.catalog.ModelCatalog;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Time of one routing decision, {@link Router#route}, in nanoseconds, over 16 instances whose
 * loads change from call to call (the chosen instance's in-flight count grows, another's
 * shrinks, as in a running cluster). Requests have 1,024-token prompts opening with one of 32
 * shared 512-token prefixes; the instances' cached-prefix lengths are precomputed, so the
 * engine's own prefix-cache lookup (done only for routers that ask) is not included.
 * Requirement: under 1 us per request for 16 instances.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class RoutingBenchmark {

  static final int INSTANCES = 16;
  static final int REQUESTS = 1024;

  /** Router provider name. */
  @Param({"round-robin", "least-loaded", "weighted", "prefix-affinity"})
  public String router;

  private Router impl;
  private final Snapshot[] snapshots = new Snapshot[INSTANCES];
  private final Request[] requests = new Request[REQUESTS];
  private final View view = new View();
  private int next;

  @Setup
  public void setUp() {
    EngineLimits limits = EngineLimits.defaults();
    Context ctx = new Context(ModelCatalog.byName("meta-llama/Llama-2-7b-hf"),
        GpuCatalog.byName("H100"), Deployment.of(limits, 1, 16, 7462, 0.9), Coefficients.empty(),
        Map.of(), 42);
    impl = Providers.select(RouterProvider.class, router).create(ctx);
    SplittableRandom rnd = new SplittableRandom(7);
    for (int i = 0; i < INSTANCES; i++) {
      snapshots[i] = new Snapshot(i, rnd.nextInt(20), rnd.nextInt(64), rnd.nextDouble(),
          rnd.nextInt(80));
    }
    int[][] prefixes = new int[32][];
    for (int g = 0; g < prefixes.length; g++) {
      prefixes[g] = new int[512];
      for (int k = 0; k < 512; k++) {
        prefixes[g][k] = g * 100_000 + k;
      }
    }
    for (int i = 0; i < REQUESTS; i++) {
      int[] prompt = new int[1024];
      int g = rnd.nextInt(prefixes.length);
      System.arraycopy(prefixes[g], 0, prompt, 0, 512);
      for (int k = 512; k < 1024; k++) {
        prompt[k] = 10_000_000 + i * 1024 + k;
      }
      int[] cached = new int[INSTANCES];
      for (int s = 0; s < INSTANCES; s++) {
        cached[s] = (g + s) % 4 == 0 ? 512 : 0;
      }
      requests[i] = new Request(i, prompt, BlockHashes.ofFullBlocks(prompt, 16), cached);
    }
  }

  @Benchmark
  public int route() {
    Request r = requests[next];
    next = (next + 1) & (REQUESTS - 1);
    view.routing = r;
    int choice = impl.route(r, view);
    snapshots[choice].inFlight++;
    Snapshot other = snapshots[(choice + 7) & (INSTANCES - 1)];
    if (other.inFlight > 0) {
      other.inFlight--;
    }
    return choice;
  }

  private final class View implements ClusterView {
    Request routing;

    @Override
    public int size() {
      return INSTANCES;
    }

    @Override
    public InstanceSnapshot get(int index) {
      Snapshot s = snapshots[index];
      s.routing = routing;
      return s;
    }

    @Override
    public long nowUs() {
      return next * 1000L;
    }
  }

  private static final class Snapshot implements InstanceSnapshot {
    final int index;
    final int queue;
    final int running;
    final double kv;
    int inFlight;
    Request routing;

    Snapshot(int index, int queue, int running, double kv, int inFlight) {
      this.index = index;
      this.queue = queue;
      this.running = running;
      this.kv = kv;
      this.inFlight = inFlight;
    }

    @Override
    public int index() {
      return index;
    }

    @Override
    public int queueDepth() {
      return queue;
    }

    @Override
    public int runningBatchSize() {
      return running;
    }

    @Override
    public double kvUtilization() {
      return kv;
    }

    @Override
    public int inFlight() {
      return inFlight;
    }

    @Override
    public int cachedPrefixTokens() {
      return routing == null ? 0 : routing.cached[index];
    }
  }

  /** A request being routed: its prompt's block hashes and how much of it each instance caches. */
  private static final class Request extends BenchBatch.Request {
    final int[] prompt;
    final long[] hashes;
    final int[] cached;
    private long[] otherHashes;
    private int otherBlockSize;

    Request(long id, int[] prompt, long[] hashes, int[] cached) {
      super(id, prompt.length, 0, 0);
      this.prompt = prompt;
      this.hashes = hashes;
      this.cached = cached;
    }

    @Override
    public long[] promptBlockHashes(int blockSizeTokens) {
      if (blockSizeTokens == 16) {
        return hashes;
      }
      if (otherHashes == null || otherBlockSize != blockSizeTokens) { // cached, as the engine does
        otherHashes = BlockHashes.ofFullBlocks(prompt, blockSizeTokens);
        otherBlockSize = blockSizeTokens;
      }
      return otherHashes;
    }
  }
}
