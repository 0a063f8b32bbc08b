package io.blis.cli.serve;

import io.blis.api.RequestView;
import io.blis.engine.EngineListener;
import io.blis.engine.result.InstanceStatus;
import io.blis.engine.LiveSimulation;
import io.blis.engine.Simulation;
import io.blis.engine.result.SimulationResult;
import io.blis.workload.RequestOutcome;
import io.blis.workload.RequestSpec;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs a {@link LiveSimulation} in real time on one thread: simulated microseconds are wall-clock
 * microseconds since the driver started, less the time the driver had to hold the simulation back
 * (below). Requests submitted from any thread arrive at the simulated time of their submission;
 * every token is handed to its request's {@link ResponseSink} when the wall clock reaches the
 * token's simulated client time.
 *
 * <p>When the machine cannot keep up (a CPU shared with other work, thousands of streams), the
 * driver does not let the simulation run ahead of what it can deliver: whenever a delivery or an
 * engine event is more than {@value #LAG_BUDGET_US} us late on this thread, simulated time is held
 * back by the excess. Later
 * tokens then come later, but in their order and with their simulated spacing, as a real server
 * short of CPU slows down, instead of arriving in bunches; every latency the server reports is
 * measured on the same stretched clock, so it agrees with what its clients see. The total held
 * back is {@link #heldBackUs()}.
 *
 * <p>The loop: take new submissions and aborts; process the simulation's events up to now;
 * deliver every due token in time order; publish a status snapshot every {@value
 * #STATUS_INTERVAL_US} us; sleep until the next event, the next delivery or a submission.
 */
final class RealTimeDriver implements AutoCloseable {

  static final long STATUS_INTERVAL_US = 100_000;
  private static final long MAX_PARK_US = 50_000;
  /** The last stretch before a due time that the thread spins instead of parking, us. */
  static final long SPIN_US = 1_000;
  /** How late a delivery may be before simulated time is held back, us. */
  static final long LAG_BUDGET_US = 2_000;
  /** At most one warning about holding back per this many wall-clock microseconds. */
  static final long WARN_INTERVAL_US = 10_000_000;
  /** Holding back less than this within a warning interval is not worth a warning, us. */
  static final long WARN_THRESHOLD_US = 50_000;
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(RealTimeDriver.class);

  /** What the front end reads of the simulation: counters and the instances, at one time. */
  record Snapshot(long timeUs, List<InstanceStatus> instances, long promptTokens,
      long generationTokens, long completed, long aborted, long rejected, long inFlight,
      List<EngineCounts> engines, long heldBackUs,
      java.util.Optional<io.blis.engine.result.AutoscaleReport.Sample> replicas,
      java.util.OptionalInt gatewayQueued,
      java.util.Map<String, io.blis.engine.result.AutoscaleReport.Sample> replicasByPool) {}

  /**
   * One instance's token counters as vLLM counts them: prompt tokens when a request's prefill
   * completes (its first token), generated tokens as they are emitted, and the tokens of each
   * engine step in the buckets of {@link ServeMetrics#ITERATION_TOKEN_BUCKETS} (one more count for
   * +Inf; not cumulative).
   */
  record EngineCounts(long promptTokens, long generationTokens, long[] stepTokenBuckets,
      long stepTokenSum) {}

  private record Submission(long id, ServeRequest request, ResponseSink sink, long arrivalNanos) {}

  private record Abort(long id) {}

  /** One request in the engine. */
  private static final class Live {
    final ServeRequest request;
    final ResponseSink sink;
    final int maxTokens;
    boolean gone;
    // per-request timing for vLLM's metrics (engine microseconds, -1 until it happens)
    int instance = -1;
    long queuedUs = -1;
    long scheduledUs = -1;
    long firstTokenUs = -1;
    long lastTokenUs = -1;
    int generated;

    Live(ServeRequest request, ResponseSink sink, int maxTokens) {
      this.request = request;
      this.sink = sink;
      this.maxTokens = maxTokens;
    }

    RequestStats stats(String finishReason) {
      return new RequestStats(Math.max(0, instance), finishReason, request.promptTokens().length,
          generated, maxTokens, queuedUs, scheduledUs, firstTokenUs, lastTokenUs);
    }
  }

  private static final int TOKEN = 0;
  private static final int FINISH = 1;

  /** Something to hand to a sink at a simulated time; ordered by time, then by creation. */
  private record Delivery(long timeUs, long seq, Live live, int kind, int index)
      implements Comparable<Delivery> {
    @Override
    public int compareTo(Delivery o) {
      return timeUs != o.timeUs ? Long.compare(timeUs, o.timeUs) : Long.compare(seq, o.seq);
    }
  }

  private final LiveSimulation sim;
  private final Runnable afterDeliveries;
  /** How late the simulation thread handed each token to its sink, microseconds. */
  final org.HdrHistogram.Histogram dispatchLatenessUs = new org.HdrHistogram.ConcurrentHistogram(3);
  private final long originNanos;
  /** Wall-clock time the simulation was held back so far, us (written by the simulation thread). */
  private volatile long heldBackUs;
  private final ConcurrentLinkedQueue<Object> inbox = new ConcurrentLinkedQueue<>();
  private final AtomicLong ids = new AtomicLong();
  private final Thread thread;
  private final CountDownLatch stopped = new CountDownLatch(1);
  private volatile boolean running = true;
  private volatile Snapshot snapshot;
  private volatile Throwable failure;
  private SimulationResult result;

  // simulation thread only
  private final PriorityQueue<Delivery> due = new PriorityQueue<>();
  private final Map<Long, Live> live = new HashMap<>();
  private long seq;
  private long nextStatusUs;
  private long promptTokens;
  private long generationTokens;
  private long completed;
  private long aborted;
  private long rejected;
  private long warnedAtUs;
  private long heldBackWhenWarnedUs;
  private final long[] enginePromptTokens;
  private final long[] engineGenerationTokens;
  private final long[][] stepTokenBuckets;
  private final long[] stepTokenSums;

  /**
   * Builds the simulation from {@code builder} (its listener is replaced) and starts the thread.
   */
  RealTimeDriver(Simulation.Builder builder) {
    this(builder, () -> { });
  }

  /**
   * As {@link #RealTimeDriver(Simulation.Builder)}; {@code afterDeliveries} runs on the simulation
   * thread after each pass that handed something to a sink (to flush what the sinks batched).
   */
  /** Whether requests keep the model they name (a fleet of several models); set before the first request. */
  private volatile boolean routeByModel;

  /** The names requests give LoRA adapters (vLLM's {@code --lora-modules}); none by default. */
  private volatile java.util.Set<String> loraModules = java.util.Set.of();

  void loraModules(java.util.List<String> names) {
    loraModules = java.util.Set.copyOf(names);
  }

  void routeByModel(boolean on) {
    routeByModel = on;
  }

  /** The model each instance serves (null entries without model routing); fixed at construction. */
  java.util.List<String> servedModels() {
    return servedModels;
  }

  private java.util.List<String> servedModels;

  RealTimeDriver(Simulation.Builder builder, Runnable afterDeliveries) {
    this.afterDeliveries = afterDeliveries;
    this.sim = builder.listener(new Listener()).streamingMetrics(true).buildLive();
    this.servedModels = sim.servedModels();
    this.originNanos = System.nanoTime();
    int instances = sim.status().size();
    this.enginePromptTokens = new long[instances];
    this.engineGenerationTokens = new long[instances];
    this.stepTokenBuckets = new long[instances][ServeMetrics.ITERATION_TOKEN_BUCKETS.length + 1];
    this.stepTokenSums = new long[instances];
    this.snapshot = new Snapshot(0, sim.status(), 0, 0, 0, 0, 0, 0, engineCounts(), 0, sim.replicas(),
        sim.gatewayQueued(), sim.replicasByPool());
    this.thread = new Thread(this::loop, "blis-serve-simulation");
    thread.setDaemon(true);
    thread.start();
  }

  /** Simulated time now: wall-clock microseconds since the start, less what was held back. */
  long wallUs() {
    return (System.nanoTime() - originNanos) / 1000 - heldBackUs;
  }

  /** The {@link System#nanoTime()} of simulated time {@code us} (on the clock as held back now). */
  long nanosOf(long us) {
    return originNanos + (us + heldBackUs) * 1000;
  }

  /** How long the simulation has been held back behind the wall clock so far, us. */
  long heldBackUs() {
    return heldBackUs;
  }

  /**
   * Holds simulated time back so that nothing this thread has to do is more than {@value
   * #LAG_BUDGET_US} us late: by the excess of the lateness of the earliest due delivery or engine
   * event. (Writes the I/O threads make late are measured, {@code
   * blis:token_delivery_lateness_seconds}, but not fed back: each would be counted again for every
   * token already in their queues.)
   */
  private void holdBack() {
    // the earliest of what is due: a token to deliver, or an engine event (a step's end) not yet run
    long earliest = Math.min(sim.nextEventUs(), due.isEmpty() ? Long.MAX_VALUE : due.peek().timeUs());
    long late = earliest == Long.MAX_VALUE ? 0 : wallUs() - earliest;
    if (late > LAG_BUDGET_US) {
      heldBackUs += late - LAG_BUDGET_US;
    }
    long wall = (System.nanoTime() - originNanos) / 1000;
    if (wall - warnedAtUs >= WARN_INTERVAL_US) {
      long held = heldBackUs - heldBackWhenWarnedUs;
      if (held >= WARN_THRESHOLD_US) {
        LOG.warn("blis serve is short of CPU: simulated time was held back {} ms in the last {} s so that tokens"
            + " keep their order and spacing; they reach clients that much later, and the server's latency"
            + " metrics count it", held / 1000, (wall - warnedAtUs) / 1_000_000);
      }
      warnedAtUs = wall;
      heldBackWhenWarnedUs = heldBackUs;
    }
  }

  /** The latest status snapshot (at most {@value #STATUS_INTERVAL_US} us old). */
  Snapshot snapshot() {
    return snapshot;
  }

  /**
   * Hands a request to the simulation; it arrives now. Returns its id (for {@link #abort}).
   *
   * @throws IllegalStateException if the driver stopped
   */
  long submit(ServeRequest request, ResponseSink sink) {
    long id = newId();
    submit(id, request, sink);
    return id;
  }

  /** A fresh request id, for {@link #submit(long, ServeRequest, ResponseSink)}. */
  long newId() {
    return ids.getAndIncrement();
  }

  /**
   * Hands request {@code id} (from {@link #newId()}) to the simulation; it arrives now.
   *
   * @throws IllegalStateException if the driver stopped
   */
  void submit(long id, ServeRequest request, ResponseSink sink) {
    submit(id, request, sink, System.nanoTime());
  }

  /**
   * Hands request {@code id} to the simulation; it arrives at {@code arrivalNanos} (a {@link
   * System#nanoTime()}: when its head reached the server, before its body was read and parsed),
   * or when the simulation thread takes it if the simulated clock has already passed that time.
   *
   * @throws IllegalStateException if the driver stopped
   */
  void submit(long id, ServeRequest request, ResponseSink sink, long arrivalNanos) {
    if (!running) {
      throw new IllegalStateException("the simulated server is shutting down");
    }
    inbox.add(new Submission(id, request, sink, arrivalNanos));
    LockSupport.unpark(thread);
  }

  /** The client of request {@code id} went away: the simulated engine aborts it. */
  void abort(long id) {
    inbox.add(new Abort(id));
    LockSupport.unpark(thread);
  }

  /** Stops the loop and returns the run's result (requests in flight count as left over). */
  SimulationResult stop() throws InterruptedException {
    running = false;
    LockSupport.unpark(thread);
    stopped.await();
    if (failure != null) {
      throw new IllegalStateException("the simulation failed: " + failure, failure);
    }
    return result;
  }

  @Override
  public void close() {
    try {
      stop();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Why the simulation thread died, or null. */
  Throwable failure() {
    return failure;
  }

  // ------------------------------------------------------------------ simulation thread

  private void loop() {
    try {
      while (running) {
        takeInbox();
        holdBack();
        long now = Math.max(wallUs(), sim.nowUs());
        sim.advanceTo(now);
        deliver(Math.max(wallUs(), now));
        if (now >= nextStatusUs) {
          publish(now);
          nextStatusUs = now + STATUS_INTERVAL_US;
        }
        if (!inbox.isEmpty()) {
          continue;
        }
        long next = Math.min(sim.nextEventUs(), due.isEmpty() ? Long.MAX_VALUE : due.peek().timeUs());
        next = Math.min(next, nextStatusUs);
        waitUntil(next);
      }
      result = sim.end();
    } catch (Throwable t) {
      failure = t;
      running = false;
      for (Live l : live.values()) {
        safely(() -> l.sink.onFailed(500, "the simulation failed: " + t));
      }
    } finally {
      stopped.countDown();
    }
  }

  /**
   * Waits for simulated time {@code us} or a submission. Far from it, parks (at most {@value
   * #MAX_PARK_US} us at a time, and wakes {@value #SPIN_US} us early, since a park may overshoot
   * by a millisecond on a busy machine) and returns to the loop; within {@value #SPIN_US} us of
   * it, spins. The spin is the only busy wait: an idle server spins one millisecond per status
   * interval, not the whole interval.
   */
  private void waitUntil(long us) {
    long remainingUs = us - wallUs();
    if (remainingUs > SPIN_US) {
      LockSupport.parkNanos(this, (Math.min(remainingUs, MAX_PARK_US + SPIN_US) - SPIN_US) * 1000);
      return;
    }
    while (wallUs() < us && inbox.isEmpty() && running) {
      Thread.onSpinWait();
    }
  }

  private void takeInbox() {
    Object o;
    while ((o = inbox.poll()) != null) {
      long now = Math.max(wallUs(), sim.nowUs());
      if (o instanceof Submission s) {
        long arrival = Math.max(sim.nowUs(), Math.min(now, (s.arrivalNanos() - originNanos) / 1000 - heldBackUs));
        sim.advanceTo(arrival);
        int max = s.request().maxTokens();
        RequestSpec spec = RequestSpec.simple(s.id(), arrival, s.request().promptTokens(), max);
        if (routeByModel) { // several models: the engine routes by the name the request gave
          spec = spec.withModel(s.request().model());
        } else if (loraModules.contains(s.request().model())) { // the base model with that adapter
          spec = spec.withAdapter(s.request().model());
        }
        Live l = new Live(s.request(), s.sink(), max);
        live.put(s.id(), l);
        sim.submit(spec);
      } else if (o instanceof Abort a) {
        sim.advanceTo(now);
        Live l = live.remove(a.id());
        if (l != null) {
          l.gone = true;
          aborted++;
          sim.abort(a.id());
          safely(() -> l.sink.onStats(l.stats(RequestStats.ABORT)));
        }
      }
    }
  }

  private void deliver(long nowUs) {
    boolean any = false;
    while (!due.isEmpty() && due.peek().timeUs() <= nowUs) {
      any = true;
      Delivery d = due.poll();
      Live l = d.live();
      if (l.gone) {
        continue;
      }
      if (d.kind() == TOKEN) {
        dispatchLatenessUs.recordValue(Math.max(0, wallUs() - d.timeUs()));
        safely(() -> l.sink.onToken(d.index(), l.maxTokens, nanosOf(d.timeUs())));
      } else {
        safely(() -> l.sink.onStats(l.stats(RequestStats.LENGTH)));
        safely(() -> l.sink.onFinished(l.request.promptTokens().length, l.maxTokens));
      }
    }
    if (any) {
      safely(afterDeliveries);
    }
  }

  private static void safely(Runnable r) {
    try {
      r.run();
    } catch (RuntimeException e) {
      // a sink's failure (a closed connection) must not stop the simulation
    }
  }

  private void publish(long nowUs) {
    snapshot = new Snapshot(nowUs, sim.status(), promptTokens, generationTokens, completed, aborted,
        rejected, live.size(), engineCounts(), heldBackUs, sim.replicas(), sim.gatewayQueued(), sim.replicasByPool());
  }

  private List<EngineCounts> engineCounts() {
    EngineCounts[] out = new EngineCounts[stepTokenSums.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = new EngineCounts(enginePromptTokens[i], engineGenerationTokens[i],
          stepTokenBuckets[i].clone(), stepTokenSums[i]);
    }
    return List.of(out);
  }

  private boolean known(int instance) {
    return instance >= 0 && instance < stepTokenSums.length;
  }

  /** Turns engine events into deliveries. */
  private final class Listener implements EngineListener {
    @Override
    public void onQueued(int instance, RequestView request, long timeUs) {
      Live l = live.get(request.id());
      if (l != null && l.queuedUs < 0) {
        l.queuedUs = timeUs;
        l.instance = instance;
        safely(() -> l.sink.onEngine(instance));
      }
    }

    @Override
    public void onScheduled(int instance, RequestView request, long stepId, boolean resume, long timeUs) {
      Live l = live.get(request.id());
      if (l != null && l.scheduledUs < 0) {
        l.scheduledUs = timeUs;
      }
    }

    @Override
    public void onFirstToken(int instance, RequestView request, long stepId, long timeUs, long clientTimeUs) {
      Live l = live.get(request.id());
      if (l != null && l.firstTokenUs < 0) {
        l.firstTokenUs = timeUs;
        if (known(instance)) {
          enginePromptTokens[instance] += request.inputTokens();
        }
      }
    }

    @Override
    public void onStep(int instance, io.blis.engine.StepRecord step) {
      if (!known(instance)) {
        return;
      }
      long tokens = step.prefillTokens() + step.decodeTokens();
      double[] bounds = ServeMetrics.ITERATION_TOKEN_BUCKETS;
      int b = 0;
      while (b < bounds.length && tokens > bounds[b]) {
        b++;
      }
      stepTokenBuckets[instance][b]++;
      stepTokenSums[instance] += tokens;
    }

    @Override
    public void onToken(int instance, RequestView request, int tokenIndex, long timeUs, long clientTimeUs) {
      Live l = live.get(request.id());
      if (l != null) {
        generationTokens++;
        l.generated++;
        l.lastTokenUs = timeUs;
        if (known(instance)) {
          engineGenerationTokens[instance]++;
        }
        due.add(new Delivery(clientTimeUs, seq++, l, TOKEN, tokenIndex));
      }
    }

    @Override
    public void onFinished(int instance, RequestView request, RequestOutcome outcome,
        long engineEndUs, long clientEndUs) {
      Live l = live.remove(request.id());
      if (l == null) {
        return; // aborted by its client
      }
      switch (outcome) {
        case COMPLETED -> {
          completed++;
          promptTokens += request.inputTokens();
          due.add(new Delivery(clientEndUs, seq++, l, FINISH, 0));
        }
        case REJECTED -> {
          rejected++;
          safely(() -> l.sink.onFailed(400, "the simulated engine rejected the request: a prompt of "
              + request.inputTokens() + " tokens with " + l.maxTokens
              + " output tokens does not fit its max_model_len or KV cache"));
        }
        default -> {
          aborted++;
          safely(() -> l.sink.onStats(l.stats(RequestStats.ABORT)));
          safely(() -> l.sink.onFailed(503, "the simulated engine dropped the request (" + outcome + ")"));
        }
      }
    }
  }
}
