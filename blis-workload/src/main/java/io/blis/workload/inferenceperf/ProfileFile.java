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
    Api api,
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
      throw new IllegalArgumentException("missing 'data' section (type: shared_prefix)");
    }
    if (load == null) {
      throw new IllegalArgumentException("missing 'load' section (type and stages)");
    }
    if (api != null && api.type != null && !api.type.equals("completion") && !api.type.equals("chat")) {
      throw new IllegalArgumentException(
          "api.type '" + api.type + "' is not supported, expected completion or chat");
    }
    if (Boolean.FALSE.equals(ignoreEos)) {
      throw new IllegalArgumentException(
          "ignore_eos: false is not supported: output lengths are only known with ignore_eos");
    }
  }

  record Api(String type, Boolean streaming, JsonNode headers) {}

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
      Integer numGroups,
      Integer numPromptsPerGroup,
      Integer systemPromptLen,
      Integer questionLen,
      Integer outputLen,
      Boolean enableMultiTurnChat,
      Integer uniquePrompts) {

    Data {
      if (!"shared_prefix".equals(type)) {
        throw new IllegalArgumentException(
            "data.type '" + type + "' is not supported, expected shared_prefix");
      }
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

    SharedPrefixData toData() {
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
      if (sweep != null && !sweep.isNull()) {
        throw new IllegalArgumentException("load.sweep is not supported: list the stages explicitly");
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
    double interval = or(load.interval(), or(load.stageIntervalS(), 1.0));
    double timeout = or(load.clientTimeoutS(), or(load.requestTimeout(), 300.0));
    InferencePerfProfile.LoadType type = load.type().equals("poisson")
        ? InferencePerfProfile.LoadType.POISSON
        : InferencePerfProfile.LoadType.CONSTANT;
    return new InferencePerfProfile(
        data.toData(), stages, interval, timeout, type, data.multiTurn());
  }

  private static <T> T or(T value, T fallback) {
    return value != null ? value : fallback;
  }
}
