package io.blis.cli;

import io.blis.engine.cluster.Cluster;
import io.blis.engine.spec.AcceptanceProfile;
import io.blis.engine.spec.AcceptanceProfiles;
import io.blis.engine.spec.SpeculativeConfig;
import io.blis.engine.spec.SpeculativeMethod;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The speculative-decoding and KV-dtype flags (a picocli mixin of the deployment flags): vLLM's
 * ({@code --speculative-config}, {@code --kv-cache-dtype}) and Go BLIS's ({@code
 * --num-speculative-tokens}, {@code --speculative-acceptance-rate}, {@code --speculative-method}),
 * and how acceptance is chosen: per-position rates, a published profile, or one mean rate.
 */
final class SpeculativeOptions {

  @Option(names = "--kv-cache-dtype", paramLabel = "auto|fp8|fp8_e4m3|fp8_e5m2",
      description = "vLLM's KV-cache storage type: fp8 stores one byte an element, so about twice the tokens fit and decode"
          + " attention reads half the bytes (default: auto, the model's dtype).")
  String kvCacheDtype;

  @Option(names = "--speculative-config", paramLabel = "JSON",
      description = "vLLM's speculative decoding, e.g. '{\"method\": \"eagle3\", \"model\": \"...\","
          + " \"num_speculative_tokens\": 3}' (methods: ngram, eagle, eagle3, mtp, medusa, draft_model).")
  String speculativeConfig;

  @Option(names = "--num-speculative-tokens", paramLabel = "K",
      description = "Go BLIS: drafts per decoding request and step (0 = off, the default).")
  Integer numSpeculativeTokens;

  @Option(names = "--speculative-method", paramLabel = "mtp|eagle|eagle3|medusa|ngram|draft",
      description = "Go BLIS: how drafts are proposed (default with --num-speculative-tokens: mtp).")
  String speculativeMethod;

  @Option(names = "--speculative-model", paramLabel = "NAME|FILE",
      description = "The separate draft model (method draft / draft_model), as a catalog name or a config.json.")
  String speculativeModel;

  @Option(names = "--speculative-acceptance-rate", paramLabel = "ALPHA",
      description = "Go BLIS: the mean fraction of drafts accepted, in [0, 1]; spread over positions as a constant"
          + " conditional rate with that mean.")
  Double acceptanceRate;

  @Option(names = "--speculative-acceptance", paramLabel = "R1,R2,...", split = ",",
      description = "Per-position acceptance rates as vLLM's spec-decode metrics print them (the fraction of"
          + " verifications that kept position i; non-increasing).")
  double[] positionRates;

  @Option(names = "--speculative-acceptance-profile", paramLabel = "NAME",
      description = "A published acceptance profile bundled with BLIS (docs/speculative-decoding.md lists them; the"
          + " method's default when no acceptance is given).")
  String profile;

  @Option(names = "--speculative-acceptance-for", paramLabel = "WORKLOAD=PROFILE|R1:R2:...",
      description = "The acceptance of one workload's requests apart (repeatable): WORKLOAD is a tenant or an SLO"
          + " class of the workload, the value a bundled profile's name or per-position rates separated by colons,"
          + " e.g. --speculative-acceptance-for code=eagle3-llama-4-maverick-humaneval.")
  java.util.Map<String, String> acceptanceFor;

  @Option(names = "--speculative-host-us", paramLabel = "US",
      description = "Host time of one drafter pass and of a step's speculative bookkeeping, microseconds (default: "
          + SpeculativeConfig.DEFAULT_HOST_US_PER_PASS + ", vLLM of mid 2025 on H100; see docs/speculative-decoding.md).")
  Double hostUs;

  private SpeculativeConfig config;

  /** Whether any flag turns speculation on (a K of 0 leaves it off). */
  boolean enabled() {
    return speculativeConfig != null || (numSpeculativeTokens != null && numSpeculativeTokens > 0);
  }

  void validate(CommandLine cl) {
    if (kvCacheDtype != null) {
      try {
        io.blis.latency.catalog.ModelConfig.kvCacheBytesOf(kvCacheDtype);
      } catch (IllegalArgumentException e) {
        DeploymentOptions.require(cl, false, "--" + e.getMessage());
      }
    }
    boolean acceptanceGiven = acceptanceRate != null || positionRates != null || profile != null
        || acceptanceFor != null;
    if (!enabled()) {
      DeploymentOptions.require(cl, !acceptanceGiven && speculativeMethod == null && speculativeModel == null
              && hostUs == null,
          "--speculative-method, --speculative-model, --speculative-host-us and the acceptance flags need --num-speculative-tokens above 0"
              + " or --speculative-config");
      config = null;
      return;
    }
    DeploymentOptions.require(cl, speculativeConfig == null || numSpeculativeTokens == null,
        "give either --speculative-config (vLLM) or --num-speculative-tokens (Go BLIS), not both");
    int given = (acceptanceRate != null ? 1 : 0) + (positionRates != null ? 1 : 0) + (profile != null ? 1 : 0);
    DeploymentOptions.require(cl, given <= 1, "give one of --speculative-acceptance-rate, --speculative-acceptance and"
        + " --speculative-acceptance-profile");
    try {
      SpeculativeMethod method;
      int k;
      String model;
      int layers = 1;
      if (speculativeConfig != null) {
        DeploymentOptions.require(cl, speculativeMethod == null,
            "--speculative-method is Go BLIS's; with --speculative-config give \"method\" inside it");
        SpeculativeConfig.Parsed p = SpeculativeConfig.parseVllm(speculativeConfig, "--speculative-config");
        method = p.method();
        k = p.tokens();
        model = speculativeModel != null ? speculativeModel : p.model();
        layers = p.draftLayers();
      } else {
        method = speculativeMethod == null ? SpeculativeMethod.MTP : SpeculativeMethod.of(speculativeMethod);
        k = numSpeculativeTokens;
        model = speculativeModel == null ? "" : speculativeModel;
      }
      DeploymentOptions.require(cl, k >= 1 && k <= SpeculativeConfig.MAX_TOKENS,
          "num_speculative_tokens must be in [1, " + SpeculativeConfig.MAX_TOKENS + "], got " + k);
      AcceptanceProfile acceptance;
      String source;
      if (acceptanceRate != null) {
        acceptance = AcceptanceProfile.ofMeanRate(acceptanceRate, k);
        source = "--speculative-acceptance-rate " + acceptanceRate;
      } else if (positionRates != null) {
        acceptance = AcceptanceProfile.ofPositionRates(positionRates);
        source = "--speculative-acceptance";
      } else {
        AcceptanceProfiles.Entry e = profile != null ? AcceptanceProfiles.bundled().named(profile)
            : AcceptanceProfiles.bundled().defaultFor(method);
        DeploymentOptions.require(cl, e != null, "no published acceptance profile for " + method.vllmName()
            + " is bundled: give --speculative-acceptance-rate, --speculative-acceptance or"
            + " --speculative-acceptance-profile (" + AcceptanceProfiles.bundled().names() + ")");
        acceptance = e.profile();
        source = "profile " + e.name() + " (" + e.source() + ")";
      }
      java.util.Map<String, AcceptanceProfile> byWorkload = new java.util.TreeMap<>();
      if (acceptanceFor != null) {
        for (java.util.Map.Entry<String, String> e : acceptanceFor.entrySet()) {
          byWorkload.put(e.getKey(), workloadAcceptance(cl, e.getKey(), e.getValue()));
        }
      }
      config = new SpeculativeConfig(method, k, acceptance, source, model, layers,
          hostUs != null ? hostUs : SpeculativeConfig.DEFAULT_HOST_US_PER_PASS, byWorkload);
    } catch (IllegalArgumentException e) {
      DeploymentOptions.require(cl, false, e.getMessage());
    }
  }

  /** A {@code --speculative-acceptance-for} value: a bundled profile's name, or rates separated by colons. */
  private static AcceptanceProfile workloadAcceptance(CommandLine cl, String workload, String value) {
    String v = value.strip();
    if (!v.isEmpty() && (Character.isDigit(v.charAt(0)) || v.charAt(0) == '.')) {
      String[] parts = v.split(":");
      double[] rates = new double[parts.length];
      for (int i = 0; i < parts.length; i++) {
        try {
          rates[i] = Double.parseDouble(parts[i].strip());
        } catch (NumberFormatException e) {
          DeploymentOptions.require(cl, false, "--speculative-acceptance-for " + io.blis.latency.coeff.InputTrees.quote(
              workload) + ": '" + io.blis.latency.coeff.InputTrees.quote(parts[i]) + "' is not a rate (expected rates"
              + " separated by colons, e.g. 0.7:0.5:0.3, or a bundled profile's name)");
        }
      }
      return AcceptanceProfile.ofPositionRates(rates);
    }
    return AcceptanceProfiles.bundled().named(v).profile();
  }

  /** The speculation (after {@link #validate}), or null when it is off. */
  SpeculativeConfig config() {
    return config;
  }

  void apply(Cluster.Builder cb) {
    if (kvCacheDtype != null) {
      cb.kvCacheDtype(kvCacheDtype);
    }
    if (config != null) {
      cb.speculative(config);
    }
  }
}
