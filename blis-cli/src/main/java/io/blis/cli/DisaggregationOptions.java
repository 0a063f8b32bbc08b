package io.blis.cli;

import io.blis.engine.cluster.Cluster;
import io.blis.engine.cluster.PdSpec;
import io.blis.engine.cluster.PolicyBundle;
import io.blis.engine.cluster.PoolSpec;
import io.blis.engine.disagg.Decider;
import io.blis.engine.disagg.Disaggregation;
import io.blis.engine.disagg.Role;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The prefill/decode disaggregation flags (a picocli mixin of the deployment flags), named as Go
 * BLIS's: {@code --prefill-instances} and {@code --decode-instances} split the single pool of
 * {@code --num-instances} (the rest do both), {@code --pd-*} set the decider and the transfer,
 * {@code --prefill-*} and {@code --decode-*} set the two pools apart. A policy bundle's pools take
 * a {@code role} and its {@code disaggregation} section instead; these {@code --pd-*} flags win
 * over that section.
 */
final class DisaggregationOptions {

  @Option(names = "--prefill-instances", paramLabel = "N",
      description = "Instances that prefill disaggregated requests (with --decode-instances; the rest of --num-instances do both).")
  Integer prefillInstances;

  @Option(names = "--decode-instances", paramLabel = "N",
      description = "Instances that decode disaggregated requests and serve the requests kept whole.")
  Integer decodeInstances;

  @Option(names = "--prefill-decode-instances", paramLabel = "N",
      description = "Go BLIS: instances that do both (at least this many; every instance neither prefill nor decode does both).")
  Integer sharedInstances;

  @Option(names = "--pd-decider", paramLabel = "never|always|prefix-threshold",
      description = "Which requests are disaggregated: none (default), all, or those with more than --pd-prefix-threshold"
          + " prompt tokens not cached on the best decode instance.")
  String decider;

  @Option(names = "--pd-prefix-threshold", paramLabel = "N",
      description = "prefix-threshold decider: uncached prompt tokens above which a request is disaggregated (default: 16, llm-d's).")
  Integer prefixThreshold;

  @Option(names = "--pd-transfer-bandwidth", paramLabel = "GB/S",
      description = "A fixed KV transfer bandwidth over the whole KV (Go BLIS's); without it the KV moves over the links"
          + " between the two instances (NVLink within a node, the NIC between nodes, from the GPU catalog).")
  Double bandwidthGBps;

  @Option(names = "--pd-transfer-base-latency", paramLabel = "MS",
      description = "Fixed cost of every KV transfer, milliseconds (default: 0.05).")
  Double baseLatencyMs;

  @Option(names = "--pd-transfer-contention",
      description = "With --pd-transfer-bandwidth: concurrent transfers share it (over the links they always share each instance's).")
  Boolean contention;

  @Option(names = "--prefill-tp", paramLabel = "N", description = "Tensor parallelism of the prefill instances (default: --tp).")
  Integer prefillTp;

  @Option(names = "--decode-tp", paramLabel = "N", description = "Tensor parallelism of the decode instances (default: --tp).")
  Integer decodeTp;

  @Option(names = "--prefill-hardware", paramLabel = "GPU", description = "GPU of the prefill instances (default: --gpu).")
  String prefillGpu;

  @Option(names = "--decode-hardware", paramLabel = "GPU", description = "GPU of the decode instances (default: --gpu).")
  String decodeGpu;

  @Option(names = "--prefill-max-model-len", paramLabel = "N", description = "max-model-len of the prefill instances.")
  Integer prefillMaxModelLen;

  @Option(names = "--decode-max-model-len", paramLabel = "N", description = "max-model-len of the decode instances.")
  Integer decodeMaxModelLen;

  /** Whether the flags split the single pool. */
  boolean splits() {
    return prefillInstances != null || decodeInstances != null || sharedInstances != null;
  }

  /**
   * Checks the flags against the policy bundle ({@code bundle}: its pools, their roles and its
   * {@code disaggregation} section). A {@code --pd-*} flag that cannot change the run is refused:
   * a decider other than never, or any transfer setting, without a prefill/decode split (the
   * flags' or the bundle's roles); the prefix threshold with another decider; a transfer setting
   * when no request is disaggregated (decider never); contention without a fixed bandwidth.
   */
  void validate(CommandLine cl, PolicyBundle bundle) {
    boolean bundlePools = !bundle.pools().isEmpty();
    boolean perPool = prefillTp != null || decodeTp != null || prefillGpu != null || decodeGpu != null
        || prefillMaxModelLen != null || decodeMaxModelLen != null;
    DeploymentOptions.require(cl, !perPool || splits(),
        "--prefill-tp, --decode-tp, --prefill-hardware, --decode-hardware and --prefill/decode-max-model-len set the"
            + " pools --prefill-instances and --decode-instances make; give those too");
    DeploymentOptions.require(cl, !splits() || !bundlePools,
        "--prefill-instances and --decode-instances split the single pool of --num-instances; the --policy-config has"
            + " pools of its own (give each a role: prefill, decode or both)");
    for (Integer n : new Integer[] {prefillInstances, decodeInstances, sharedInstances}) {
      DeploymentOptions.require(cl, n == null || n >= 0,
          "--prefill-instances, --decode-instances and --prefill-decode-instances must be >= 0, got " + n);
    }
    if (decider != null) {
      try {
        Decider.parse(decider);
      } catch (IllegalArgumentException e) {
        DeploymentOptions.require(cl, false, "--pd-decider must be never, always or prefix-threshold, got '" + decider + "'");
      }
    }
    DeploymentOptions.require(cl, prefixThreshold == null || prefixThreshold >= 0,
        "--pd-prefix-threshold must be >= 0, got " + prefixThreshold);
    DeploymentOptions.require(cl, bandwidthGBps == null || (bandwidthGBps >= Disaggregation.Transfer.MIN_BANDWIDTH_GBPS
            && bandwidthGBps < Disaggregation.Transfer.MAX_BANDWIDTH_GBPS),
        "--pd-transfer-bandwidth must be in " + Disaggregation.Transfer.BANDWIDTH_RANGE + ", got "
            + bandwidthGBps);
    DeploymentOptions.require(cl, baseLatencyMs == null || (baseLatencyMs >= 0 && baseLatencyMs <= 3_600_000),
        "--pd-transfer-base-latency must be milliseconds in [0, 3600000] (one hour), got " + baseLatencyMs);
    for (Integer n : new Integer[] {prefillTp, decodeTp, prefillMaxModelLen, decodeMaxModelLen}) {
      DeploymentOptions.require(cl, n == null || n >= 1,
          "--prefill-tp, --decode-tp, --prefill-max-model-len and --decode-max-model-len must be at least 1, got " + n);
    }
    requireEffect(cl, bundle);
  }

  /** Refuses a {@code --pd-*} flag that would change nothing (see {@link #validate}). */
  private void requireEffect(CommandLine cl, PolicyBundle bundle) {
    boolean split = splits() || bundle.pools().stream().anyMatch(p -> p.disaggregationRole() != Role.BOTH);
    PdSpec section = bundle.disaggregation() == null ? PdSpec.none() : bundle.disaggregation();
    String effective = decider != null ? decider : section.decider() != null ? section.decider() : "never";
    String label = Decider.parse(effective).label();
    String noSplit = " has no effect without a prefill/decode split: give --prefill-instances and --decode-instances"
        + " (or a --policy-config whose pools have a role)";
    DeploymentOptions.require(cl, split || decider == null || label.equals("never"), "--pd-decider " + label + noSplit);
    String transfer = bandwidthGBps != null ? "--pd-transfer-bandwidth" : baseLatencyMs != null
        ? "--pd-transfer-base-latency" : contention != null ? "--pd-transfer-contention" : null;
    DeploymentOptions.require(cl, split || prefixThreshold == null, "--pd-prefix-threshold" + noSplit);
    DeploymentOptions.require(cl, split || transfer == null, transfer + noSplit);
    DeploymentOptions.require(cl, prefixThreshold == null || label.equals("prefix-threshold"),
        "--pd-prefix-threshold applies to --pd-decider prefix-threshold only; the decider is " + label
            + (decider == null ? (section.decider() == null ? " (the default)" : " (the --policy-config's)") : ""));
    DeploymentOptions.require(cl, transfer == null || !label.equals("never"), transfer + " has no effect with"
        + " --pd-decider never" + (decider == null ? (section.decider() == null ? " (the default)" : " (the"
        + " --policy-config's)") : "") + ": no request is disaggregated, no KV moves (give --pd-decider always or"
        + " prefix-threshold)");
    DeploymentOptions.require(cl, !Boolean.TRUE.equals(contention) || bandwidthGBps != null
            || section.transferBandwidthGBps() != null,
        "--pd-transfer-contention has no effect without --pd-transfer-bandwidth: over the links transfers always"
            + " share each instance's NVLink and NIC");
  }

  /** Applies the flags to the cluster. */
  void apply(Cluster.Builder cb) {
    PdSpec s = new PdSpec(decider, prefixThreshold, bandwidthGBps,
        baseLatencyMs == null ? null : Math.round(baseLatencyMs * 1000), contention, null, null);
    if (!s.equals(PdSpec.none())) {
      cb.disaggregation(s);
    }
    if (splits()) {
      cb.splitPools(prefillInstances == null ? 0 : prefillInstances, decodeInstances == null ? 0 : decodeInstances,
          sharedInstances == null ? 0 : sharedInstances, pool("prefill", prefillTp, prefillGpu, prefillMaxModelLen),
          pool("decode", decodeTp, decodeGpu, decodeMaxModelLen));
    }
  }

  private static PoolSpec pool(String name, Integer tp, String gpu, Integer maxModelLen) {
    PoolSpec.Builder b = PoolSpec.builder(name).gpu(gpu);
    if (tp != null) {
      b.tp(tp);
    }
    if (maxModelLen != null) {
      b.maxModelLen(maxModelLen);
    }
    return b.build();
  }
}
