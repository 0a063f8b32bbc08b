package io.blis.latency;

import io.blis.api.BatchView;
import io.blis.api.Coefficients;
import io.blis.api.DeploymentSpec;
import io.blis.api.HardwareSpec;
import io.blis.api.ModelSpec;
import io.blis.api.Phase;
import io.blis.api.ProviderContext;
import io.blis.api.RequestView;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Simple immutable test implementations of the SPI views. */
public final class Fixtures {

  private Fixtures() {}

  /** A request of the batch: prompt length, progress index and new tokens of this step. */
  public record Req(int inputTokens, int progressIndex, int newTokens) implements RequestView {
    @Override
    public long id() {
      return 0;
    }

    @Override
    public long arrivalTimeUs() {
      return 0;
    }

    @Override
    public int generatedTokens() {
      return Math.max(0, progressIndex - inputTokens);
    }

    @Override
    public Phase phase() {
      return progressIndex < inputTokens ? Phase.PREFILL : Phase.DECODE;
    }

    @Override
    public int priority() {
      return 1;
    }

    @Override
    public String sloClass() {
      return "standard";
    }

    @Override
    public String tenant() {
      return "";
    }
  }

  /** A prefill chunk of {@code newTokens} starting at {@code progressIndex}. */
  public static Req prefill(int inputTokens, int progressIndex, int newTokens) {
    return new Req(inputTokens, progressIndex, newTokens);
  }

  /** A decode step of a request with a context of {@code contextTokens} already computed. */
  public static Req decode(int inputTokens, int contextTokens) {
    return new Req(inputTokens, contextTokens, 1);
  }

  /** A batch over a list of requests. */
  public record Batch(List<Req> requests) implements BatchView {
    public Batch {
      requests = List.copyOf(requests);
    }

    public static Batch of(Req... rs) {
      return new Batch(List.of(rs));
    }

    public Batch with(Req r) {
      List<Req> l = new ArrayList<>(requests);
      l.add(r);
      return new Batch(l);
    }

    @Override
    public int size() {
      return requests.size();
    }

    @Override
    public RequestView get(int index) {
      return requests.get(index);
    }
  }

  /** A deployment with vLLM-like defaults and the given TP. */
  public record Deployment(int tensorParallel) implements DeploymentSpec {
    @Override
    public int blockSizeTokens() {
      return 16;
    }

    @Override
    public int maxNumSeqs() {
      return 128;
    }

    @Override
    public int maxNumBatchedTokens() {
      return 2048;
    }

    @Override
    public int maxModelLen() {
      return 4096;
    }

    @Override
    public long totalKvBlocks() {
      return 10_000;
    }

    @Override
    public double gpuMemoryUtilization() {
      return 0.9;
    }
  }

  /** A provider context. */
  public record Context(
      ModelSpec model,
      HardwareSpec hardware,
      DeploymentSpec deployment,
      Coefficients coefficients,
      Map<String, String> options)
      implements ProviderContext {

    public static Context of(ModelSpec m, HardwareSpec h, int tp, Coefficients c) {
      return new Context(m, h, new Deployment(tp), c, Map.of());
    }
  }
}
