package io.blis.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * What the flags of a Go BLIS README command mean, shown on a workload built so that they visibly
 * matter: the check {@code shows=NAME} of {@code goblis/readme-commands.txt}. The README's own
 * workload (100 requests at 5 req/s, one SLO class, no shared prefix) is too light for a
 * scheduler, a priority policy or a router to change anything, so each show runs the command's
 * own arguments again with a small workload of its own added ({@code goblis/shows/*.yaml} or
 * length flags, with {@code --per-request}), asserts the behaviour the flag documents there, and
 * then runs the same workload with the flag as it would be if it were ignored (its default; where
 * the default is the flag's own value, the setting that undoes it) and asserts that the behaviour
 * is then absent. A flag that did nothing would fail the first assertion; a workload on which the
 * flag could not matter would fail the second.
 */
final class GoBlisShows {

  /** Runs {@code blis} with the arguments (files looked up beside the list) and returns its JSON. */
  interface Runner {
    JsonNode run(List<String> args);
  }

  /** One show: the command line's arguments, its result on the README workload, and a runner. */
  private interface Show {
    void check(List<String> line, JsonNode lineResult, Runner blis);
  }

  private static final Map<String, Show> SHOWS = Map.of(
      "shortest-prompt-first", GoBlisShows::shortestPromptFirst,
      "least-urgent-first", GoBlisShows::leastUrgentFirst,
      "most-urgent-first", GoBlisShows::mostUrgentFirst,
      "inverted-classes", GoBlisShows::invertedClasses,
      "fewest-in-flight", GoBlisShows::fewestInFlight,
      "same-prefix-same-instance", GoBlisShows::samePrefixSameInstance,
      "cached-prefix-wins", GoBlisShows::cachedPrefixWins,
      "running-and-token-limits", GoBlisShows::runningAndTokenLimits,
      "max-model-len-rejects", GoBlisShows::maxModelLenRejects,
      "gpu-from-file", GoBlisShows::gpuFromFile);

  /** The prompt lengths that tell the SLO class in the class workloads (see their comments). */
  private static final Map<String, Integer> CLASS_PROMPT = Map.of("critical", 100, "batch", 200);

  private GoBlisShows() {}

  static void check(String name, List<String> line, JsonNode lineResult, Runner blis) {
    Show show = SHOWS.get(name);
    assertThat(show).as("shows=%s: known shows %s", name, new TreeSet<>(SHOWS.keySet())).isNotNull();
    show.check(List.copyOf(line), lineResult, blis);
  }

  // ---------------------------------------------------------------------------------- the shows

  /** {@code --scheduler sjf}: of the requests waiting together, the shortest prompt is served first. */
  private static void shortestPromptFirst(List<String> line, JsonNode lineResult, Runner blis) {
    // a burst of 12 requests (about 1 ms apart) with prompts of 512 +- 400 tokens, one running at a time
    List<String> burst = List.of("--num-requests", "12", "--rate", "1000", "--prompt-tokens", "512",
        "--prompt-tokens-stdev", "400", "--output-tokens", "16", "--output-tokens-stdev", "0", "--max-num-seqs", "1",
        "--per-request");
    expect(blis, "shortest prompt first", plus(line, burst), GoBlisShows::shortestFirstViolation, Map.of(
        "fcfs, the default scheduler", plus(with(line, "--scheduler", "fcfs"), burst)));
  }

  /** {@code --scheduler reverse-priority}: the least urgent class is served first. */
  private static void leastUrgentFirst(List<String> line, JsonNode lineResult, Runner blis) {
    List<String> work = List.of("--workload-spec", "shows/critical-then-batch.yaml", "--max-num-seqs", "1",
        "--per-request");
    expect(blis, "batch before critical", plus(line, work), r -> classOrderViolation(r, "batch", "critical"), Map.of(
        "fcfs, the default scheduler", plus(with(line, "--scheduler", "fcfs"), work),
        "priority-fcfs, the order it reverses", plus(with(line, "--scheduler", "priority-fcfs"), work)));
  }

  /**
   * {@code --priority-policy slo-based --scheduler priority-fcfs}: the most urgent SLO class is
   * served first. slo-based is also the default priority policy, so "ignored" is shown by the
   * policy that gives every request one priority and by the default scheduler, which reads none.
   */
  private static void mostUrgentFirst(List<String> line, JsonNode lineResult, Runner blis) {
    List<String> work = List.of("--workload-spec", "shows/batch-then-critical.yaml", "--max-num-seqs", "1",
        "--per-request");
    expect(blis, "critical before batch", plus(line, work), r -> classOrderViolation(r, "critical", "batch"), Map.of(
        "--priority-policy constant", plus(with(line, "--priority-policy", "constant"), work),
        "fcfs, the default scheduler", plus(with(line, "--scheduler", "fcfs"), work)));
  }

  /**
   * {@code --priority-policy inverted-slo}: background most urgent, critical least. Priorities
   * order the queue only under a scheduler that reads them (the README's fcfs does not), so the
   * show adds {@code --scheduler priority-fcfs}, the scheduler Go BLIS's README pairs them with.
   */
  private static void invertedClasses(List<String> line, JsonNode lineResult, Runner blis) {
    assertThat(line).as("the show adds the scheduler").doesNotContain("--scheduler");
    List<String> work = List.of("--scheduler", "priority-fcfs", "--workload-spec", "shows/critical-then-batch.yaml",
        "--max-num-seqs", "1", "--per-request");
    expect(blis, "batch before critical", plus(line, work), r -> classOrderViolation(r, "batch", "critical"), Map.of(
        "slo-based, the default priority policy", plus(with(line, "--priority-policy", "slo-based"), work)));
  }

  /** {@code --routing-policy least-loaded}: a request goes to an instance with the fewest requests. */
  private static void fewestInFlight(List<String> line, JsonNode lineResult, Runner blis) {
    List<String> work = List.of("--workload-spec", "shows/long-then-short.yaml", "--per-request");
    expect(blis, "short requests kept off the busy instance", plus(line, work),
        GoBlisShows::awayFromTheBusyInstanceViolation, Map.of(
        "round-robin, the default router", plus(with(line, "--routing-policy", "round-robin"), work)));
  }

  /** {@code --routing-policy prefix-affinity}: requests that share a prefix go to one instance. */
  private static void samePrefixSameInstance(List<String> line, JsonNode lineResult, Runner blis) {
    List<String> work = List.of("--workload-spec", "shows/two-prefixes.yaml", "--per-request");
    expect(blis, "each prefix group on one instance", plus(line, work), GoBlisShows::splitGroupViolation, Map.of(
        "round-robin, the default router", plus(with(line, "--routing-policy", "round-robin"), work),
        "least-loaded, its fallback", plus(with(line, "--routing-policy", "least-loaded"), work)));
  }

  /**
   * {@code --routing-policy weighted --routing-cache-weight W1 --routing-load-weight W2}: with the
   * prefix cache weighed, a request goes where its prefix is cached (while the load differs by a
   * request or two); with the cache weight 0 the load alone spreads each group.
   */
  private static void cachedPrefixWins(List<String> line, JsonNode lineResult, Runner blis) {
    List<String> work = List.of("--workload-spec", "shows/two-prefixes.yaml", "--per-request");
    List<String> roundRobin = with(without(line, "--routing-cache-weight", "--routing-load-weight"),
        "--routing-policy", "round-robin");
    expect(blis, "each prefix group on one instance", plus(line, work), GoBlisShows::splitGroupViolation, Map.of(
        "round-robin, the default router", plus(roundRobin, work),
        "--routing-cache-weight 0", plus(with(line, "--routing-cache-weight", "0"), work)));
  }

  /**
   * {@code --max-num-running-reqs N --max-num-scheduled-tokens T}: at most N requests run and at
   * most T tokens are scheduled per step. The README's values (256, 2048) are the defaults, so the
   * show lowers them to 1 and 256: then every request runs alone and prefills in chunks of at most
   * 256 tokens, so the engine takes at least ceil(prompt / 256) + output - 1 steps per request
   * (the step that completes the prefill gives the first token).
   */
  private static void runningAndTokenLimits(List<String> line, JsonNode lineResult, Runner blis) {
    List<String> burst = List.of("--num-requests", "10", "--rate", "1000", "--prompt-tokens", "1000",
        "--prompt-tokens-stdev", "0", "--output-tokens", "10", "--output-tokens-stdev", "0", "--per-request");
    List<String> lowered = with(with(line, "--max-num-running-reqs", "1"), "--max-num-scheduled-tokens", "256");
    Function<JsonNode, String> violation = r -> stepsViolation(r, 256);
    Map<String, List<String>> baselines = new TreeMap<>();
    baselines.put("the README's values, the defaults", plus(line, burst));
    baselines.put("--max-num-running-reqs left at 256", plus(with(lowered, "--max-num-running-reqs", "256"), burst));
    baselines.put("--max-num-scheduled-tokens left at 2048",
        plus(with(lowered, "--max-num-scheduled-tokens", "2048"), burst));
    expect(blis, "one request at a time, 256 tokens per step", plus(lowered, burst), violation, baselines);
  }

  /**
   * {@code --max-model-len L}: a request whose prompt plus output exceeds L is rejected, the others
   * are served.
   */
  private static void maxModelLenRejects(List<String> line, JsonNode lineResult, Runner blis) {
    int maxLen = Integer.parseInt(valueOf(line, "--max-model-len"));
    int output = 800;
    List<String> work = List.of("--num-requests", "20", "--prompt-tokens", "1400", "--prompt-tokens-stdev", "500",
        "--output-tokens", String.valueOf(output), "--output-tokens-stdev", "0", "--per-request");
    expect(blis, "rejected exactly when over --max-model-len", plus(line, work),
        r -> maxModelLenViolation(r, maxLen, output), Map.of(
        "the default (the model's context)", plus(without(line, "--max-model-len"), work)));
  }

  /**
   * {@code --hardware A100-80 --hardware-config FILE}: the file's A100-80 entry. Decode steps read
   * the weights and the KV cache, at the file's 2.039 TB/s instead of the H100 entry's 3.35 (1.64x
   * as long), so the same command on the file's H100 entry has a clearly shorter inter-token
   * latency: at least 1.3x, the bandwidth ratio less room for per-step costs both GPUs pay alike.
   * Were the flag ignored, both runs would be on one GPU (ratio 1).
   */
  private static void gpuFromFile(List<String> line, JsonNode lineResult, Runner blis) {
    assertThat(valueOf(line, "--hardware")).isEqualTo("A100-80");
    JsonNode h100 = blis.run(with(line, "--hardware", "H100"));
    double a100Itl = lineResult.at("/overall/itl_ms/mean").asDouble();
    double h100Itl = h100.at("/overall/itl_ms/mean").asDouble();
    assertThat(h100Itl).as("the H100 entry's mean inter-token latency").isPositive();
    assertThat(a100Itl / h100Itl).as("A100-80 mean ITL %s ms over the H100 entry's %s ms", a100Itl, h100Itl)
        .isGreaterThan(1.3);
  }

  // ----------------------------------------------------------------------------- the behaviours

  /**
   * Of the requests waiting together on an instance (all but the first it served, which found it
   * idle), the first tokens come in the order of the prompt lengths.
   */
  private static String shortestFirstViolation(JsonNode result) {
    for (List<Req> queued : queuedBehindFirst(result).values()) {
      assertThat(queued.stream().map(Req::input).distinct().count()).as("prompts of several lengths wait")
          .isGreaterThan(2);
      for (int i = 1; i < queued.size(); i++) {
        if (queued.get(i).input() < queued.get(i - 1).input()) {
          return "request " + queued.get(i).id() + " (" + queued.get(i).input() + " prompt tokens) was served after "
              + queued.get(i - 1).id() + " (" + queued.get(i - 1).input() + ")";
        }
      }
    }
    return null;
  }

  /**
   * Of the requests waiting together on an instance, every one of SLO class {@code firstClass}
   * gets its first token before any of class {@code thenClass}.
   */
  private static String classOrderViolation(JsonNode result, String firstClass, String thenClass) {
    int first = CLASS_PROMPT.get(firstClass);
    int then = CLASS_PROMPT.get(thenClass);
    for (Map.Entry<Integer, List<Req>> e : queuedBehindFirst(result).entrySet()) {
      List<Req> queued = e.getValue();
      assertThat(queued).as("instance %d: both classes wait", e.getKey())
          .anyMatch(r -> r.input() == first).anyMatch(r -> r.input() == then);
      double lastFirst = queued.stream().filter(r -> r.input() == first).mapToDouble(Req::firstTokenMs).max()
          .orElseThrow();
      double earliestThen = queued.stream().filter(r -> r.input() == then).mapToDouble(Req::firstTokenMs).min()
          .orElseThrow();
      if (lastFirst > earliestThen) {
        return "instance " + e.getKey() + ": a " + thenClass + " request got its first token at " + earliestThen
            + " ms, before the last " + firstClass + " one at " + lastFirst + " ms";
      }
    }
    return null;
  }

  /**
   * Per instance, the requests it served after the first one (in the order of their first
   * tokens), checking that they were all waiting when the first one was half done: so they were
   * all in the queue the scheduler ordered (async scheduling lets a request be seen one step late,
   * far less than half of the first request's run).
   */
  private static Map<Integer, List<Req>> queuedBehindFirst(JsonNode result) {
    Map<Integer, List<Req>> byInstance = requests(result).stream()
        .collect(Collectors.groupingBy(Req::instance, TreeMap::new, Collectors.toList()));
    Map<Integer, List<Req>> out = new TreeMap<>();
    byInstance.forEach((instance, reqs) -> {
      reqs.sort(Comparator.comparingDouble(Req::firstTokenMs));
      Req firstServed = reqs.get(0);
      List<Req> queued = new ArrayList<>(reqs.subList(1, reqs.size()));
      double halfDone = firstServed.arrivalMs() + (firstServed.endMs() - firstServed.arrivalMs()) / 2;
      assertThat(queued).as("instance %d: the workload has every request waiting before request %d is half done"
          + " (%s ms)", instance, firstServed.id(), halfDone).allMatch(r -> r.arrivalMs() < halfDone);
      out.put(instance, queued);
    });
    return out;
  }

  /** The short requests all go to an instance other than the one running the long request. */
  private static String awayFromTheBusyInstanceViolation(JsonNode result) {
    List<Req> all = requests(result);
    Req longest = all.stream().max(Comparator.comparingInt(Req::output)).orElseThrow();
    List<Req> shorts = all.stream().filter(r -> r != longest).sorted(Comparator.comparingDouble(Req::arrivalMs))
        .toList();
    assertThat(shorts).as("short requests").hasSizeGreaterThan(3);
    // the workload: the long request runs past the last arrival, and each short one is done before
    // the next arrives, so at every decision its instance has one request and another instance none
    assertThat(longest.endMs()).as("the long request's end").isGreaterThan(shorts.get(shorts.size() - 1).arrivalMs());
    for (int i = 1; i < shorts.size(); i++) {
      assertThat(shorts.get(i - 1).endMs()).as("request %d ends before the next arrives", shorts.get(i - 1).id())
          .isLessThan(shorts.get(i).arrivalMs());
    }
    for (Req r : shorts) {
      if (r.instance() == longest.instance()) {
        return "request " + r.id() + " went to instance " + r.instance() + ", busy with the long request "
            + longest.id() + ", while another instance had nothing";
      }
    }
    return null;
  }

  /** The requests of each prefix group (told by the prompt length) all go to one instance. */
  private static String splitGroupViolation(JsonNode result) {
    Map<Integer, Set<Integer>> instancesByGroup = new TreeMap<>();
    Map<Integer, Integer> sizes = new HashMap<>();
    for (Req r : requests(result)) {
      instancesByGroup.computeIfAbsent(r.input(), k -> new TreeSet<>()).add(r.instance());
      sizes.merge(r.input(), 1, Integer::sum);
    }
    assertThat(sizes).as("two prefix groups of several requests each").hasSize(2)
        .allSatisfy((group, n) -> assertThat(n).isGreaterThan(2));
    for (Map.Entry<Integer, Set<Integer>> e : instancesByGroup.entrySet()) {
      if (e.getValue().size() > 1) {
        return "the group of " + e.getKey() + "-token prompts went to instances " + e.getValue();
      }
    }
    return null;
  }

  /** At least ceil(prompt / budget) + output - 1 engine steps per request, all completed. */
  private static String stepsViolation(JsonNode result, int budget) {
    List<Req> all = requests(result);
    assertThat(all).as("requests").hasSizeGreaterThan(1).allMatch(r -> r.outcome().equals("completed"));
    long needed = all.stream().mapToLong(r -> (r.input() + budget - 1) / budget + r.output() - 1).sum();
    long steps = result.at("/engine/steps").asLong();
    return steps >= needed ? null
        : steps + " steps, fewer than the " + needed + " that one request at a time, " + budget
            + " tokens per step, takes";
  }

  /**
   * A request is rejected (prompt too long, or prompt plus output) exactly when its prompt plus
   * {@code output} exceeds {@code maxLen}; both kinds occur.
   */
  private static String maxModelLenViolation(JsonNode result, int maxLen, int output) {
    List<Req> all = requests(result);
    assertThat(all).as("the workload has requests under and over the limit")
        .anyMatch(r -> r.input() + output <= maxLen).anyMatch(r -> r.input() + output > maxLen);
    for (Req r : all) {
      boolean over = r.input() + output > maxLen;
      String want = !over ? "completed"
          : r.input() >= maxLen ? "rejected prompt_exceeds_max_model_len"
          : "rejected prompt_plus_output_exceeds_max_model_len";
      String got = r.outcome() + (r.rejectReason().isEmpty() ? "" : " " + r.rejectReason());
      if (!got.equals(want)) {
        return "request " + r.id() + " (" + r.input() + " + " + output + " tokens, limit " + maxLen + "): " + got
            + ", expected " + want;
      }
    }
    return null;
  }

  // ---------------------------------------------------------------------------------- machinery

  /**
   * Runs {@code on}, where the behaviour must hold, and each baseline, where it must not: a
   * violation is a description, null when the behaviour holds.
   */
  private static void expect(Runner blis, String behaviour, List<String> on, Function<JsonNode, String> violation,
      Map<String, List<String>> baselines) {
    assertThat(violation.apply(blis.run(on))).as("%s, with %s", behaviour, on).isNull();
    baselines.forEach((what, args) -> assertThat(violation.apply(blis.run(args)))
        .as("with %s (%s) the workload must not show '%s', or it does not tell whether the flag acts", what, args,
            behaviour)
        .isNotNull());
  }

  /** One per-request record. Times are milliseconds from the start. */
  private record Req(long id, int instance, double arrivalMs, int input, int output, String outcome,
      double firstTokenMs, double endMs, String rejectReason) {}

  private static List<Req> requests(JsonNode result) {
    JsonNode records = result.path("requests");
    assertThat(records.isArray()).as("per-request records (--per-request)").isTrue();
    List<Req> out = new ArrayList<>();
    for (JsonNode r : records) {
      double arrival = r.path("arrival_s").asDouble() * 1000;
      out.add(new Req(r.path("id").asLong(), r.path("instance").asInt(0), arrival, r.path("input_tokens").asInt(),
          r.path("output_tokens").asInt(), r.path("outcome").asText(), arrival + r.path("ttft_ms").asDouble(Double.NaN),
          arrival + r.path("e2e_ms").asDouble(Double.NaN), r.path("reject_reason").asText("")));
    }
    return out;
  }

  /** {@code args} with {@code flag}'s value set to {@code value}; the flag must be there. */
  private static List<String> with(List<String> args, String flag, String value) {
    int at = args.indexOf(flag);
    assertThat(at).as("%s in %s", flag, args).isNotNegative();
    List<String> out = new ArrayList<>(args);
    out.set(at + 1, value);
    return out;
  }

  /** {@code args} without the flags and their values; each must be there. */
  private static List<String> without(List<String> args, String... flags) {
    List<String> out = new ArrayList<>(args);
    for (String flag : flags) {
      int at = out.indexOf(flag);
      assertThat(at).as("%s in %s", flag, args).isNotNegative();
      out.subList(at, at + 2).clear();
    }
    return out;
  }

  private static String valueOf(List<String> args, String flag) {
    int at = args.indexOf(flag);
    assertThat(at).as("%s in %s", flag, args).isNotNegative();
    return args.get(at + 1);
  }

  private static List<String> plus(List<String> args, List<String> more) {
    List<String> out = new ArrayList<>(args);
    out.addAll(more);
    return out;
  }
}
