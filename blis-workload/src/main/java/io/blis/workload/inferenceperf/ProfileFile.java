package io.blis.workload.inferenceperf;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/**
 * Binding of an inference-perf config (or the {@code workload} object of experiments.json).
 * Sections that do not shape the request stream (server, tokenizer, report, storage, metrics,
 * circuit breakers) are accepted and ignored; inside {@code data} and {@code load} every key is
 * checked.
 */
record ProfileFile(
    JsonNode api,
    Data data,
    Load load,
    JsonNode server,
    JsonNode tokenizer,
    JsonNode report,
    JsonNode storage,
    JsonNode metrics,
    JsonNode circuitBreakers,
    String name,
    String generator,
    Boolean ignoreEos,
    JsonNode dataAsWrittenInProfile,
    Long totalRequests) {

  ProfileFile {
    if (data == null) {
      throw new IllegalArgumentException(
          "missing 'data' section (type: shared_prefix, synthetic or random, and its settings)");
    }
    if (load == null) {
      throw new IllegalArgumentException("missing 'load' section (type and stages)");
    }
    if (apiType(api).equals("chat") && !"shared_prefix".equals(data.type())) {
      throw new IllegalArgumentException("api: inference-perf sends " + data.type()
          + " prompts over the completion API only, got chat");
    }
    // ignore_eos is a key of inference-perf's server section (default true); the flattened
    // workload of experiments.json has it at the top
    JsonNode serverIgnoreEos = server != null && server.isObject() ? server.get("ignore_eos") : null;
    if (serverIgnoreEos != null && !serverIgnoreEos.isBoolean() && !serverIgnoreEos.isNull()) {
      throw new IllegalArgumentException("server.ignore_eos must be true or false, got " + serverIgnoreEos);
    }
    if (Boolean.FALSE.equals(ignoreEos) || (serverIgnoreEos != null && serverIgnoreEos.isBoolean()
        && !serverIgnoreEos.asBoolean())) {
      throw new IllegalArgumentException((Boolean.FALSE.equals(ignoreEos) ? "" : "server.")
          + "ignore_eos: false is not supported: the server would stop at end-of-sequence tokens, so output"
          + " lengths are only known with ignore_eos");
    }
  }

  /**
   * The API type of {@code api}: inference-perf's mapping {@code {type, streaming, headers}}, or the
   * older bare string ({@code api: completion}).
   */
  static String apiType(JsonNode api) {
    if (api == null || api.isNull()) {
      return "completion";
    }
    String type;
    if (api.isTextual()) {
      type = api.asText();
    } else if (api.isObject()) {
      api.fieldNames().forEachRemaining(k -> {
        if (!List.of("type", "streaming", "headers").contains(k)) {
          throw new IllegalArgumentException("api: unknown key '" + k + "', expected type, streaming, headers");
        }
      });
      JsonNode t = api.get("type");
      if (t != null && !t.isTextual()) {
        throw new IllegalArgumentException("api: type must be completion or chat, got " + t);
      }
      JsonNode streaming = api.get("streaming");
      if (streaming != null && !streaming.isBoolean() && !streaming.isNull()) {
        throw new IllegalArgumentException("api: streaming must be true or false, got " + streaming);
      }
      type = t == null ? "completion" : t.asText();
    } else {
      throw new IllegalArgumentException("api must be completion, chat or {type: completion|chat,"
          + " streaming: true|false}, got " + api);
    }
    if (!type.equals("completion") && !type.equals("chat")) {
      throw new IllegalArgumentException(
          "api.type '" + type + "' is not supported, expected completion or chat");
    }
    return type;
  }

  /**
   * inference-perf's length distribution ({@code input_distribution}, {@code
   * output_distribution}); {@code std} is accepted for {@code std_dev}. Defaults are
   * inference-perf's: min 10, max 1024, mean 512, std_dev 200, and total_count, when left out, the
   * most requests of one load stage plus one (int(rate x duration) + 1), as inference-perf sets it.
   */
  record Distribution(Integer min, Integer max, Double mean, Double stdDev, Double std,
      Integer totalCount) {
    Distribution {
      if (stdDev != null && std != null) {
        throw new IllegalArgumentException("std_dev and its alias std: give one, not both");
      }
      toDistribution(min, max, mean, stdDev != null ? stdDev : std, totalCount != null ? totalCount : 1);
    }

    /** @param defaultCount total_count when the profile leaves it out */
    LengthDistributionData.Distribution toDistribution(int defaultCount) {
      return toDistribution(min, max, mean, stdDev != null ? stdDev : std,
          totalCount != null ? totalCount : defaultCount);
    }

    private static LengthDistributionData.Distribution toDistribution(
        Integer min, Integer max, Double mean, Double std, int count) {
      return new LengthDistributionData.Distribution(or(min, 10), or(max, 1024), or(mean, 512.0),
          or(std, 200.0), count);
    }
  }

  /** Data types that read prompts from a dataset file, which the simulation does not have. */
  static final List<String> DATASET_TYPES = List.of("shareGPT", "cnn_dailymail",
      "infinity_instruct", "billsum_conversations", "dataset_trace");

  /** The data types this project generates. */
  static final List<String> PARAMETRIC_TYPES = List.of("shared_prefix", "synthetic", "random");

  record SharedPrefix(
      Integer numGroups,
      Integer numPromptsPerGroup,
      Integer systemPromptLen,
      Integer questionLen,
      Integer outputLen,
      Boolean enableMultiTurnChat,
      Integer numUniqueSystemPrompts,
      Integer numUsersPerSystemPrompt) {

    SharedPrefix {
      if (numGroups != null && numUniqueSystemPrompts != null) {
        throw new IllegalArgumentException(
            "give num_groups or its alias num_unique_system_prompts, not both");
      }
      if (numPromptsPerGroup != null && numUsersPerSystemPrompt != null) {
        throw new IllegalArgumentException(
            "give num_prompts_per_group or its alias num_users_per_system_prompt, not both");
      }
      data(numGroups, numPromptsPerGroup, systemPromptLen, questionLen, outputLen,
          numUniqueSystemPrompts, numUsersPerSystemPrompt);
    }

    SharedPrefixData toData() {
      return data(numGroups, numPromptsPerGroup, systemPromptLen, questionLen, outputLen,
          numUniqueSystemPrompts, numUsersPerSystemPrompt);
    }

    private static SharedPrefixData data(Integer groups, Integer perGroup, Integer system,
        Integer question, Integer output, Integer groupsAlias, Integer perGroupAlias) {
      return new SharedPrefixData(
          or(groups, or(groupsAlias, 10)),
          or(perGroup, or(perGroupAlias, 10)),
          or(system, 100),
          or(question, 50),
          or(output, 50));
    }
  }

  /** {@code data}: nested ({@code shared_prefix: {...}}) or flattened (experiments.json). */
  record Data(
      String type,
      SharedPrefix sharedPrefix,
      Distribution inputDistribution,
      Distribution outputDistribution,
      String path,
      JsonNode trace,
      Integer numGroups,
      Integer numPromptsPerGroup,
      Integer systemPromptLen,
      Integer questionLen,
      Integer outputLen,
      Boolean enableMultiTurnChat,
      Integer uniquePrompts) {

    Data {
      checkType(type);
      if (!type.equals("shared_prefix")) {
        if (inputDistribution == null || outputDistribution == null) {
          throw new IllegalArgumentException("data.type " + type + " needs input_distribution and"
              + " output_distribution ({min, max, mean, std_dev, total_count})");
        }
        if (sharedPrefix != null || numGroups != null || numPromptsPerGroup != null
            || systemPromptLen != null || questionLen != null || outputLen != null
            || enableMultiTurnChat != null) {
          throw new IllegalArgumentException("data.type " + type + " takes input_distribution and"
              + " output_distribution; the shared-prefix settings belong to data.type shared_prefix");
        }
        if (path != null || (trace != null && !trace.isNull())) {
          throw new IllegalArgumentException("data." + (path != null ? "path" : "trace")
              + " reads a dataset or trace file, which is not simulated: the "
              + type + " lengths come from the distributions");
        }
        toData(type, inputDistribution, outputDistribution, 1);
      } else {
        if (inputDistribution != null || outputDistribution != null) {
          throw new IllegalArgumentException("data.type shared_prefix takes the shared_prefix"
              + " settings; input_distribution and output_distribution belong to synthetic and random");
        }
        if (path != null || (trace != null && !trace.isNull())) {
          throw new IllegalArgumentException("data." + (path != null ? "path" : "trace")
              + " has no meaning for data.type shared_prefix");
        }
        checkSharedPrefix(sharedPrefix, numGroups, numPromptsPerGroup, systemPromptLen, questionLen,
            outputLen, enableMultiTurnChat, uniquePrompts);
      }
    }

    private static void checkType(String type) {
      if (type == null) {
        throw new IllegalArgumentException("data.type is required: one of " + PARAMETRIC_TYPES
            + " (inference-perf's default, mock, is not simulated)");
      }
      if (DATASET_TYPES.contains(type)) {
        throw new IllegalArgumentException("data.type " + type + " reads its prompts from a dataset"
            + " (data.path), which the simulation does not have: use one of " + PARAMETRIC_TYPES
            + " with lengths like the dataset's");
      }
      if (type.equals("mock")) {
        throw new IllegalArgumentException("data.type mock sends prompts 'text1', 'text2', ... without"
            + " max_tokens, so the server chooses the output length: not simulated; use one of "
            + PARAMETRIC_TYPES);
      }
      if (!PARAMETRIC_TYPES.contains(type)) {
        throw new IllegalArgumentException("data.type '" + type + "' is not known, expected one of "
            + PARAMETRIC_TYPES + " (or a dataset type: " + String.join(", ", DATASET_TYPES) + ")");
      }
    }

    private static ProfileData toData(String type, Distribution in, Distribution out, int defaultCount) {
      try {
        return new LengthDistributionData(type.equals("synthetic")
            ? LengthDistributionData.Kind.SYNTHETIC : LengthDistributionData.Kind.RANDOM,
            in.toDistribution(defaultCount), out.toDistribution(defaultCount));
      } catch (IllegalArgumentException e) {
        String msg = e.getMessage();
        throw new IllegalArgumentException(msg.startsWith("output_distribution") ? msg
            : "input_distribution/output_distribution: " + msg, e);
      }
    }

    private static void checkSharedPrefix(SharedPrefix sharedPrefix, Integer numGroups,
        Integer numPromptsPerGroup, Integer systemPromptLen, Integer questionLen, Integer outputLen,
        Boolean enableMultiTurnChat, Integer uniquePrompts) {
      boolean flat = numGroups != null || numPromptsPerGroup != null || systemPromptLen != null
          || questionLen != null || outputLen != null;
      if (flat && sharedPrefix != null) {
        throw new IllegalArgumentException(
            "give the shared-prefix settings either under data.shared_prefix or directly in data");
      }
      SharedPrefixData d = sharedPrefix != null
          ? sharedPrefix.toData()
          : new SharedPrefix(numGroups, numPromptsPerGroup, systemPromptLen, questionLen, outputLen,
              enableMultiTurnChat, null, null).toData();
      if (uniquePrompts != null && uniquePrompts != d.uniquePrompts()) {
        throw new IllegalArgumentException("data.unique_prompts " + uniquePrompts
            + " differs from num_groups x num_prompts_per_group = " + d.uniquePrompts());
      }
    }

    boolean multiTurn() {
      return Boolean.TRUE.equals(
          sharedPrefix != null ? sharedPrefix.enableMultiTurnChat() : enableMultiTurnChat);
    }

    /** @param defaultCount a distribution's total_count when the profile leaves it out */
    ProfileData toData(int defaultCount) {
      if (!type.equals("shared_prefix")) {
        return toData(type, inputDistribution, outputDistribution, defaultCount);
      }
      SharedPrefixData d = sharedPrefix != null
          ? sharedPrefix.toData()
          : new SharedPrefix(numGroups, numPromptsPerGroup, systemPromptLen, questionLen, outputLen,
              enableMultiTurnChat, null, null).toData();
      return d;
    }
  }

  /** {@code rate}/{@code duration} (inference-perf) or {@code rate_rps}/{@code duration_s}. */
  record Stage(Double rate, Double duration, Double rateRps, Double durationS, Integer numRequests) {
    Stage {
      if ((rate == null) == (rateRps == null)) {
        throw new IllegalArgumentException("a stage needs exactly one of rate or rate_rps");
      }
      if ((duration == null) == (durationS == null)) {
        throw new IllegalArgumentException("a stage needs exactly one of duration or duration_s");
      }
      LoadStage s = toStage(rate != null ? rate : rateRps, duration != null ? duration : durationS);
      if (numRequests != null && numRequests != s.numRequests()) {
        throw new IllegalArgumentException("num_requests " + numRequests
            + " differs from int(rate x duration) = " + s.numRequests());
      }
    }

    LoadStage toStage() {
      return toStage(rate != null ? rate : rateRps, duration != null ? duration : durationS);
    }

    private static LoadStage toStage(double rate, double duration) {
      return new LoadStage(rate, duration);
    }
  }

  record Load(
      String type,
      List<Stage> stages,
      Double interval,
      Double stageIntervalS,
      Double clientTimeoutS,
      Double requestTimeout,
      Integer numWorkers,
      Integer workerMaxConcurrency,
      JsonNode circuitBreakers,
      JsonNode sweep) {

    Load {
      if (type == null) {
        type = "constant";
      }
      if (!type.equals("constant") && !type.equals("poisson")) {
        throw new IllegalArgumentException(
            "load.type '" + type + "' is not supported, expected constant or poisson");
      }
      if (sweep != null && !sweep.isNull()) {
        throw new IllegalArgumentException("load.sweep is not supported: list the stages explicitly");
      }
      if (stages == null || stages.isEmpty()) {
        throw new IllegalArgumentException("load.stages must list at least one {rate, duration}");
      }
      if (stages.contains(null)) {
        throw new IllegalArgumentException(
            "load.stages[" + stages.indexOf(null) + "] is empty, expected {rate, duration}");
      }
      if (interval != null && stageIntervalS != null) {
        throw new IllegalArgumentException("give interval or stage_interval_s, not both");
      }
      if (clientTimeoutS != null && requestTimeout != null) {
        throw new IllegalArgumentException("give client_timeout_s or request_timeout, not both");
      }
    }
  }

  InferencePerfProfile toProfile() {
    List<LoadStage> stages = new ArrayList<>();
    for (Stage s : load.stages()) {
      stages.add(s.toStage());
    }
    if (stages.stream().allMatch(s -> s.numRequests() == 0)) {
      throw new IllegalArgumentException("the profile sends no request: rate x duration is below 1"
          + " in every load stage (inference-perf sends int(rate x duration) requests per stage)");
    }
    double interval = or(load.interval(), or(load.stageIntervalS(), InferencePerfBlock.DEFAULT_INTERVAL_S));
    double timeout = or(load.clientTimeoutS(), or(load.requestTimeout(), InferencePerfBlock.DEFAULT_TIMEOUT_S));
    InferencePerfProfile.LoadType type = load.type().equals("poisson")
        ? InferencePerfProfile.LoadType.POISSON
        : InferencePerfProfile.LoadType.CONSTANT;
    // inference-perf's total_count when a distribution leaves it out: the largest stage's requests + 1
    int mostRequests = stages.stream().mapToInt(LoadStage::numRequests).max().orElse(0);
    return new InferencePerfProfile(
        data.toData(mostRequests + 1), stages, interval, timeout, type, data.multiTurn());
  }

  private static <T> T or(T value, T fallback) {
    return value != null ? value : fallback;
  }
}
