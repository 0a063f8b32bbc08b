package io.blis.workload.inferenceperf;

import io.blis.workload.RequestSource;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Request streams that reproduce what the inference-perf client sent for a shared-prefix profile:
 * either regenerated ({@link #synthetic}) or replayed from a recorded ground-truth trace ({@link
 * #replay}). Every request asks for exactly {@code output_len} tokens (ignore-EOS) and carries the
 * profile's client timeout.
 */
public final class InferencePerfWorkload {

  private InferencePerfWorkload() {}

  /** {@link #synthetic(InferencePerfProfile, long, PromptLengthModel)} with the default model. */
  public static RequestSource synthetic(InferencePerfProfile profile, long seed) {
    return synthetic(profile, seed, PromptLengthModel.DEFAULT);
  }

  /**
   * Regenerates the request stream: the N = groups x prompts-per-group prompts (lengths from
   * {@code model}) shuffled once with the seed; request n of a stage uses prompt n mod N (n
   * restarts at 0 every stage); {@code int(rate x duration)} requests per stage at exponential
   * gaps rescaled to sum to the stage duration, starting 1 s into the stage; the next stage starts
   * once every request of the previous one finished, plus the stage interval (the source returns
   * null from {@code next()} until then).
   */
  public static RequestSource synthetic(
      InferencePerfProfile profile, long seed, PromptLengthModel model) {
    Objects.requireNonNull(profile, "profile");
    Objects.requireNonNull(model, "model");
    return new StagedSource(profile, new PromptSet(profile.data(), model, seed), seed);
  }

  /**
   * Replays a ground-truth trace ({@code requests/<id>.csv.gz}) with its real send times (ms,
   * relative to the first request) and recorded prompt lengths; the prompt structure (prefix group,
   * prompt identity n mod N within the stage) comes from {@code profile}, as does the output length
   * and timeout. The file is validated on a first pass and streamed on a second.
   */
  public static RequestSource replay(InferencePerfProfile profile, Path traceCsvGz, long seed) {
    Objects.requireNonNull(profile, "profile");
    Objects.requireNonNull(traceCsvGz, "traceCsvGz");
    return new ReplaySource(
        profile, new PromptSet(profile.data(), PromptLengthModel.DEFAULT, seed), traceCsvGz);
  }
}
