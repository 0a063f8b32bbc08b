package io.blis.workload.synthetic;

import io.blis.workload.RequestSpec;
import io.blis.workload.Sampling;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Lazily generates the open-loop requests of one client: the next arrival time and its lengths,
 * one at a time. Times are kept in double seconds and rounded to microseconds on output.
 */
final class ClientGenerator {

  final ClientSpec client;
  final int index;
  private final SplittableRandom rng;
  /**
   * The stream of the client's adapter draws, apart from {@link #rng} so that naming adapters
   * changes none of its arrivals and lengths; null when the client draws no adapter.
   */
  private final SplittableRandom adapterRng;
  private final long horizonUs;
  /** Operational seconds of the arrival process (real seconds unless the client has a rate curve). */
  private double timeS;
  private int window;
  private boolean done;

  /** Arrival of the pending request, microseconds. Valid while {@link #done()} is false. */
  long arrivalUs;
  /** Prompt tokens after the shared prefix of the pending request. */
  int contentTokens;
  /** Output tokens of the pending request. */
  int outputTokens;
  /** The LoRA adapter the pending request names, empty for the base model. */
  String adapter = "";

  ClientGenerator(ClientSpec client, int index, long seed, long horizonUs) {
    this.client = client;
    this.index = index;
    this.rng = new SplittableRandom(Sampling.subSeed(seed, "client:" + client.id()));
    this.adapterRng = client.adapters().isNone()
        ? null : new SplittableRandom(Sampling.subSeed(seed, "adapters:" + client.id()));
    this.horizonUs = horizonUs;
    List<ActiveWindow> windows = client.windows();
    this.timeS = windows.isEmpty() ? 0 : client.curve().opS(windows.get(0).startUs() / 1e6);
    advance();
  }

  /**
   * True when the generator stopped because its next arrival would be after {@link
   * RequestSpec#MAX_TIME_US} (and within the horizon): the workload cannot be generated further.
   */
  boolean beyondTime;

  boolean done() {
    return done;
  }

  /** Closed-loop users whose first request was generated. */
  private int usersStarted;

  /**
   * Moves to the next request: first arrival is one gap after the start (or window start). For
   * closed-loop users, the next user's first request, staggered over the think time.
   */
  void advance() {
    if (done) {
      return;
    }
    SessionSpec session = client.session();
    if (session.closedLoopUsers()) {
      if (usersStarted == session.users()) {
        done = true;
        return;
      }
      // floor(u x think / users), exactly and without overflow (u < users)
      long think = session.thinkTimeUs();
      long t = usersStarted * (think / session.users()) + usersStarted * (think % session.users()) / session.users();
      usersStarted++;
      if (t > horizonUs) {
        done = true;
        return;
      }
      pending(t);
      return;
    }
    List<ActiveWindow> windows = client.windows();
    long t;
    RateCurve curve = client.curve();
    while (true) {
      // timeS is operational time: real time itself unless the rate follows a curve
      timeS += client.arrival().nextGapS(rng);
      t = Math.round((curve.varies() ? curve.realS(timeS) : timeS) * 1e6);
      if (windows.isEmpty()) {
        break;
      }
      while (window < windows.size() && t >= windows.get(window).endUs()) {
        window++;
      }
      if (window == windows.size()) {
        done = true;
        return;
      }
      ActiveWindow w = windows.get(window);
      if (t >= w.startUs()) {
        break;
      }
      // Before the next window: the process restarts at the window start.
      timeS = curve.opS(w.startUs() / 1e6);
    }
    if (t > horizonUs) {
      done = true;
      return;
    }
    if (t > RequestSpec.MAX_TIME_US) {
      done = true;
      beyondTime = true;
      return;
    }
    pending(t);
  }

  private void pending(long t) {
    arrivalUs = t;
    contentTokens = client.input().sample(rng);
    outputTokens = client.output().sample(rng);
    adapter = adapterRng == null ? client.adapter() : client.adapters().sample(adapterRng);
  }
}
