package io.blis.workload.spec;

import io.blis.workload.RequestSpec;
import io.blis.workload.StrictYaml;
import io.blis.workload.TextFiles;
import io.blis.workload.inferenceperf.InferencePerfBlock;
import io.blis.workload.inferenceperf.InferencePerfProfile;
import io.blis.workload.synthetic.ActiveWindow;
import io.blis.workload.synthetic.AdapterPopularity;
import io.blis.workload.synthetic.ArrivalProcess;
import io.blis.workload.synthetic.ClientSpec;
import io.blis.workload.synthetic.LengthDistribution;
import io.blis.workload.synthetic.LengthSpec;
import io.blis.workload.synthetic.SessionSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * Translates a bound Go BLIS workload spec ({@link GoSpecFile}) into this project's clients
 * ({@link WorkloadSpec}) or, for an {@code inference_perf} block, an inference-perf profile. Every
 * refusal is one line naming the file, the line and column of the key and what was expected;
 * fields that have no meaning here become one-line notes. Semantics follow Go BLIS where this
 * project can express them (see docs/go-blis.md).
 */
final class GoSpecs {

  /** Go BLIS's default shared-prefix length when a client names a group without a length. */
  static final int DEFAULT_PREFIX_TOKENS = 50;
  /** Go BLIS's default timeout of multi-turn session rounds, microseconds. */
  static final long SESSION_TIMEOUT_US = 300_000_000L;
  private static final long HOUR_US = 3_600_000_000L;
  private static final int DRAIN_SEGMENTS = 10;
  private static final int MAX_POPULATION = 100_000;
  private static final List<String> PROCESSES = List.of("poisson", "gamma", "weibull", "constant");
  private static final Map<String, String> V1_CLASSES = Map.of("realtime", "critical", "interactive", "standard");

  private final String text;
  private final String source;
  private final List<String> notes = new ArrayList<>();

  /** num_requests set from outside (Go BLIS's --num-requests), or 0. */
  private final long numRequests;

  GoSpecs(String text, String source) {
    this(text, source, 0);
  }

  GoSpecs(String text, String source, long numRequests) {
    this.text = text;
    this.source = source;
    this.numRequests = numRequests;
  }

  List<String> notes() {
    return notes;
  }

  /** {@code source:line:column} of the key at {@code path}, or the source alone. */
  private String at(String path) {
    return StrictYaml.location(source, text, path);
  }

  private IllegalArgumentException error(String path, String message) {
    return new Located(TextFiles.oneLine(at(path) + ": " + message));
  }

  /** An error that already names the file and position. */
  private static final class Located extends IllegalArgumentException {
    Located(String message) {
      super(message);
    }
  }

  /** {@code value.get()}, with a constructor's error located at {@code path}. */
  private <T> T locate(String path, java.util.function.Supplier<T> value) {
    try {
      return value.get();
    } catch (Located e) {
      throw e;
    } catch (IllegalArgumentException e) {
      throw error(path, e.getMessage());
    }
  }

  private void note(String path, String message) {
    notes.add(at(path) + ": " + message);
  }

  private void noMeaning(String path, Object value, String why) {
    if (value != null) {
      note(path, key(path) + " has no meaning here: " + why);
    }
  }

  /** The last key of {@code path} ("clients[0].network" names "network"). */
  static String key(String path) {
    int dot = path.lastIndexOf('.');
    return dot < 0 ? path : path.substring(dot + 1);
  }

  // ---------------------------------------------------------------- top level

  /** The Go version ("1" or "2"; absent means 1, as in Go BLIS). */
  String version(GoSpecFile f) {
    if (f.version() == null || f.version().isNull()) {
      return "1";
    }
    String v = f.version().isTextual() || f.version().isIntegralNumber() ? f.version().asText() : "";
    if (!v.equals("1") && !v.equals("2")) {
      throw error("version", "version must be \"1\" or \"2\" (Go BLIS workload spec), got "
          + f.version());
    }
    return v;
  }

  WorkloadFile translate(GoSpecFile f) {
    String version = version(f);
    long seed = f.seed() == null ? 0 : f.seed();
    noMeaning("category", f.category(), "a label for the workload (language, multimodal, reasoning)");
    noMeaning("goodput_slo_targets", f.goodputSloTargets(),
        "SLO targets go in --policy-config (slo: {CLASS: {ttft_ms, e2e_ms}})");
    boolean clients = f.clients() != null && !f.clients().isEmpty();
    boolean cohorts = f.cohorts() != null && !f.cohorts().isEmpty();
    if (f.servegenData() != null && !f.servegenData().isNull()) {
      if (!clients && !cohorts && f.inferencePerf() == null) {
        return serveGen(f, seed);
      }
      note("servegen_data", "servegen_data is not read: the spec has clients, cohorts or inference_perf"
          + " (as in Go BLIS)");
    }
    if (f.inferencePerf() != null) {
      if (clients || cohorts) {
        throw error(clients ? "clients" : "cohorts", "give clients/cohorts or inference_perf, not both");
      }
      return inferencePerf(f, seed);
    }
    if (!clients && !cohorts) {
      throw error("", "a Go BLIS workload spec needs clients, cohorts or inference_perf");
    }
    if (f.numRequests() != null && f.numRequests() < 0) {
      throw error("num_requests", "num_requests must be >= 0 (0 = no limit), got " + f.numRequests());
    }
    if (f.horizon() != null && (f.horizon() < 0 || f.horizon() > RequestSpec.MAX_TIME_US)) {
      throw error("horizon", "horizon must be in [0, " + RequestSpec.MAX_TIME_US + "] microseconds ("
          + RequestSpec.MAX_TIME_WORDS + "), got " + f.horizon());
    }
    long maxRequests = numRequests > 0 ? numRequests
        : f.numRequests() == null || f.numRequests() == 0 ? Long.MAX_VALUE : f.numRequests();
    long horizonUs = f.horizon() == null || f.horizon() == 0 ? Long.MAX_VALUE : f.horizon();
    if (maxRequests == Long.MAX_VALUE && horizonUs == Long.MAX_VALUE) {
      throw error("", "set num_requests or horizon (microseconds) to bound the workload");
    }
    List<Member> members = new ArrayList<>();
    if (clients) {
      for (int i = 0; i < f.clients().size(); i++) {
        members.add(client(f.clients().get(i), "clients[" + i + "]", i, version));
      }
    }
    if (cohorts) {
      for (int i = 0; i < f.cohorts().size(); i++) {
        members.addAll(cohort(f.cohorts().get(i), "cohorts[" + i + "]", version));
      }
    }
    List<ClientSpec> specs = clientSpecs(members, f.aggregateRate());
    return new WorkloadFile(WorkloadFile.Format.GO_BLIS, version,
        new WorkloadSpec(seed, specs, maxRequests, horizonUs), null, seed, List.copyOf(notes));
  }

  // ---------------------------------------------------------------- servegen_data

  private static final List<String> SERVEGEN_KEYS = List.of("path", "window_duration_secs", "drain_timeout_secs",
      "time_window", "span_start", "span_end");

  /**
   * A spec of {@code servegen_data} alone: the cohorts {@code blis convert servegen} would write
   * for the folder (with this spec's seed, num_requests and horizon), read as if written here.
   */
  private WorkloadFile serveGen(GoSpecFile f, long seed) {
    com.fasterxml.jackson.databind.JsonNode s = f.servegenData();
    String p = "servegen_data";
    if (!s.isObject()) {
      throw error(p, "servegen_data must be a mapping {path: DIR, window_duration_secs, drain_timeout_secs}");
    }
    for (java.util.Iterator<String> it = s.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!SERVEGEN_KEYS.contains(k)) {
        throw error(p + "." + k, "unknown key '" + k + "' in servegen_data, expected one of " + SERVEGEN_KEYS);
      }
    }
    com.fasterxml.jackson.databind.JsonNode path = s.get("path");
    if (path == null || !path.isTextual() || path.asText().isBlank()) {
      throw error(path == null ? p : p + ".path", "servegen_data.path must name the ServeGen data folder"
          + " (its chunk-N-trace.csv and chunk-N-dataset.json files)");
    }
    int window = wholeSeconds(s, p, "window_duration_secs");
    int drain = wholeSeconds(s, p, "drain_timeout_secs");
    // Go BLIS: a window of 0 (or none) is its default; a negative drain is its default, none is none
    window = window <= 0 ? ServeGenData.DEFAULT_WINDOW_S : window;
    drain = drain < 0 ? ServeGenData.DEFAULT_DRAIN_S : drain;
    for (String k : List.of("time_window", "span_start", "span_end")) {
      noMeaning(p + "." + k, s.get(k), "every window of the data is read and three periods are made of it,"
          + " as Go BLIS's servegen_data does (blis convert servegen --time keeps one period)");
    }
    java.nio.file.Path dir = java.nio.file.Path.of(path.asText());
    java.nio.file.Path beside = java.nio.file.Path.of(source).toAbsolutePath().getParent();
    if (!dir.isAbsolute() && !java.nio.file.Files.isDirectory(dir) && beside != null
        && java.nio.file.Files.isDirectory(beside.resolve(dir))) {
      dir = beside.resolve(dir);
    }
    java.nio.file.Path folder = dir;
    int w = window;
    int d = drain;
    String yaml = locate(p + ".path", () -> ServeGenData.toYaml(folder, w, d, seed, null, List.of(),
        f.numRequests(), f.horizon()));
    GoSpecs converted = new GoSpecs(yaml, source + " (servegen_data " + path.asText() + ", as converted)",
        numRequests);
    WorkloadFile out = converted.translate(StrictYaml.parse(yaml, converted.source, GoSpecFile.class));
    List<String> all = new ArrayList<>(notes);
    all.addAll(out.notes());
    return new WorkloadFile(out.format(), out.goVersion(), out.spec(), out.inferencePerf(), out.seed(), all);
  }

  private int wholeSeconds(com.fasterxml.jackson.databind.JsonNode s, String p, String key) {
    com.fasterxml.jackson.databind.JsonNode v = s.get(key);
    if (v == null || v.isNull()) {
      return 0;
    }
    if (!v.canConvertToInt() || !v.isIntegralNumber()) {
      throw error(p + "." + key, key + " must be a whole number of seconds, got " + v);
    }
    return v.asInt();
  }

  // ---------------------------------------------------------------- inference_perf

  private WorkloadFile inferencePerf(GoSpecFile f, long seed) {
    InferencePerfBlock b = f.inferencePerf();
    String p = "inference_perf";
    if (numRequests > 0) {
      throw error(p, "--num-requests does not apply to an inference_perf spec: its stages set the requests");
    }
    if (b.stages() == null || b.stages().isEmpty()) {
      throw error(p, "inference_perf.stages must list at least one {rate, duration}");
    }
    long total = 0;
    for (int i = 0; i < b.stages().size(); i++) {
      InferencePerfBlock.Stage s = b.stages().get(i);
      String sp = p + ".stages[" + i + "]";
      if (s == null || s.rate() == null || s.duration() == null) {
        throw error(sp, "a stage needs rate (requests/s) and duration (s)");
      }
      if (!(s.rate() > 0) || s.rate().isInfinite()) {
        throw error(sp + ".rate", "rate must be a positive number of requests per second, got " + s.rate());
      }
      if (!(s.duration() > 0) || s.duration() > RequestSpec.MAX_TIME_US / 1e6) {
        throw error(sp + ".duration", "duration must be a positive number of seconds, at most "
            + RequestSpec.MAX_TIME_US / 1_000_000 + ", got " + s.duration());
      }
      total += (long) (s.rate() * s.duration());
    }
    InferencePerfBlock.SharedPrefix sp = b.sharedPrefix();
    if (sp == null) {
      throw error(p, "inference_perf needs shared_prefix {num_unique_system_prompts,"
          + " num_users_per_system_prompt, system_prompt_len, question_len, output_len}");
    }
    String spp = p + ".shared_prefix";
    positive(spp + ".num_unique_system_prompts", sp.numUniqueSystemPrompts());
    positive(spp + ".num_users_per_system_prompt", sp.numUsersPerSystemPrompt());
    for (String k : List.of("system_prompt_len", "question_len", "output_len")) {
      Integer v = switch (k) {
        case "system_prompt_len" -> sp.systemPromptLen();
        case "question_len" -> sp.questionLen();
        default -> sp.outputLen();
      };
      if (v != null && v < 0) {
        throw error(spp + "." + k, k + " must be >= 0 tokens, got " + v);
      }
    }
    if (sp.systemPromptLen() == null || sp.systemPromptLen() == 0) {
      note(spp, "system_prompt_len is 0: the prompts share no system prompt here (Go BLIS gave each"
          + " group a 50-token prefix all the same)");
    }
    if (sp.outputLen() == null || sp.outputLen() == 0) {
      note(spp, "output_len 0 asks for 1 token (as in Go BLIS)");
    }
    if (f.numRequests() != null && f.numRequests() > 0 && f.numRequests() < total) {
      throw error("num_requests", "num_requests " + f.numRequests() + " is below the " + total
          + " requests the stages send (int(rate x duration) each); an inference-perf run is not cut"
          + " short here: shorten the stages, or leave num_requests out");
    }
    noMeaning("aggregate_rate", f.aggregateRate(), "the stages' rates set the load");
    noMeaning("horizon", f.horizon(), "the stages' durations bound an inference-perf run; stop the"
        + " simulation earlier with --horizon");
    InferencePerfProfile profile = locate(p, b::toProfile);
    return new WorkloadFile(WorkloadFile.Format.GO_BLIS, version(f), null, profile, seed, List.copyOf(notes));
  }

  private void positive(String path, Integer v) {
    if (v == null || v < 1) {
      throw error(path, key(path) + " must be a whole number >= 1, got " + v);
    }
  }

  // ---------------------------------------------------------------- clients

  /** A Go client (or cohort member) before rates are set: what {@link #clientSpecs} needs. */
  private record Member(String path, String id, String tenant, String sloClass, double fraction,
      GoSpecFile.Arrival arrival, GoSpecFile.Dist input, GoSpecFile.Dist output, String prefixGroup,
      Integer prefixLength, List<GoSpecFile.Window> windows, String windowsPath, long timeoutUs,
      SessionSpec session, String model, String adapter) {}

  private Member client(GoSpecFile.Client c, String path, int index, String version) {
    if (c == null) {
      throw error(path, "an empty client, expected a mapping (id, rate_fraction, arrival, ...)");
    }
    String id = c.id() == null || c.id().isBlank() ? "client-" + index : c.id();
    common(path, c.model(), c.streaming(), c.network(), c.multimodal(), c.sloTargetUs());
    if (c.concurrency() != null && c.concurrency() != 0) {
      return users(c, path, id, version);
    }
    noMeaning(path + ".think_time_us", c.thinkTimeUs(), "it goes with concurrency; session think times"
        + " are reasoning.multi_turn.think_time_us");
    if (c.rateFraction() == null || !(c.rateFraction() > 0) || c.rateFraction().isInfinite()) {
      throw error(c.rateFraction() == null ? path : path + ".rate_fraction",
          "rate_fraction must be a positive number (this client's share of aggregate_rate), got "
              + c.rateFraction());
    }
    List<GoSpecFile.Window> windows = c.lifecycle() == null || c.lifecycle().windows() == null
        ? List.of() : c.lifecycle().windows();
    SessionSpec session = session(path, c.reasoning(), c.closedLoop());
    return new Member(path, id, nz(c.tenantId()), sloClass(path, c.sloClass(), version),
        c.rateFraction(), c.arrival(), c.inputDistribution(), c.outputDistribution(),
        nz(c.prefixGroup()), c.prefixLength(), windows, path + ".lifecycle.windows",
        timeout(path, c.timeout(), session), session, nz(c.model()), adapter(path, c.adapter()));
  }

  /**
   * A client of {@code concurrency} closed-loop users: each sends its next request {@code
   * think_time_us} after its previous one completed, the first ones staggered over the think time.
   */
  private Member users(GoSpecFile.Client c, String path, String id, String version) {
    if (c.concurrency() < 0 || c.concurrency() > SessionSpec.MAX_USERS) {
      throw error(path + ".concurrency", "concurrency must be in [1, " + SessionSpec.MAX_USERS + "] users, got "
          + c.concurrency());
    }
    long think = c.thinkTimeUs() == null ? 0 : c.thinkTimeUs();
    if (think < 0 || think > RequestSpec.MAX_TIME_US) {
      throw error(path + ".think_time_us", "think_time_us must be in [0, " + RequestSpec.MAX_TIME_US
          + "] microseconds, got " + think);
    }
    String without = " does not go with concurrency (closed-loop users send single requests for the whole run)";
    if (c.reasoning() != null) {
      throw error(path + ".reasoning", "reasoning" + without);
    }
    if (c.lifecycle() != null) {
      throw error(path + ".lifecycle", "lifecycle" + without);
    }
    noMeaning(path + ".rate_fraction", c.rateFraction() == null || c.rateFraction() == 0 ? null : c.rateFraction(),
        "closed-loop users (concurrency) send as fast as their requests complete");
    noMeaning(path + ".arrival", c.arrival(), "closed-loop users (concurrency) have no arrival process");
    SessionSpec session = SessionSpec.users(c.concurrency(), think);
    return new Member(path, id, nz(c.tenantId()), sloClass(path, c.sloClass(), version),
        0, null, c.inputDistribution(), c.outputDistribution(),
        nz(c.prefixGroup()), c.prefixLength(), List.of(), path + ".lifecycle.windows",
        timeout(path, c.timeout(), session), session, nz(c.model()), adapter(path, c.adapter()));
  }

  private void common(String path, String model, Boolean streaming,
      GoSpecFile.Network network, com.fasterxml.jackson.databind.JsonNode multimodal, Long sloTargetUs) {
    if (multimodal != null && !multimodal.isNull()) {
      throw error(path + ".multimodal", "multimodal requests (image, audio and video tokens) are not"
          + " simulated here");
    }
    noMeaning(path + ".streaming", streaming, "the simulation times the server, whose work is the"
        + " same streamed or not");
    noMeaning(path + ".network", network, "there is no client network in the simulation (Go BLIS"
        + " uses it only when calibrating)");
    noMeaning(path + ".slo_target_us", sloTargetUs, "SLO targets go in --policy-config (slo:)");
  }

  private String sloClass(String path, String cls, String version) {
    if (cls == null || cls.isEmpty()) {
      return "standard";
    }
    if (version.equals("1") && V1_CLASSES.containsKey(cls)) {
      note(path + ".slo_class", "slo_class " + cls + " is Go BLIS version 1's name of "
          + V1_CLASSES.get(cls));
      return V1_CLASSES.get(cls);
    }
    if (!ClientSpec.SLO_CLASSES.contains(cls)) {
      throw error(path + ".slo_class", "unknown slo_class '" + cls + "', expected one of "
          + ClientSpec.SLO_CLASSES + (version.equals("1") ? " (or version 1's realtime, interactive)" : ""));
    }
    return cls;
  }

  private SessionSpec session(String path, GoSpecFile.Reasoning r, Boolean closedLoop) {
    if (r == null) {
      noMeaning(path + ".closed_loop", closedLoop, "it applies to multi-turn clients (reasoning.multi_turn)");
      return SessionSpec.NONE;
    }
    String rp = path + ".reasoning";
    noMeaning(rp + ".reason_ratio_distribution", r.reasonRatioDistribution(),
        "reasoning tokens are output tokens like any other here");
    GoSpecFile.MultiTurn m = r.multiTurn();
    if (m == null) {
      noMeaning(path + ".closed_loop", closedLoop, "it applies to multi-turn clients (reasoning.multi_turn)");
      return SessionSpec.NONE;
    }
    String mp = rp + ".multi_turn";
    if (m.maxRounds() == null || m.maxRounds() < 1) {
      throw error(m.maxRounds() == null ? mp : mp + ".max_rounds",
          "max_rounds must be a whole number >= 1, got " + m.maxRounds());
    }
    long think = m.thinkTimeUs() == null ? 0 : m.thinkTimeUs();
    if (think < 0 || think > RequestSpec.MAX_TIME_US) {
      throw error(mp + ".think_time_us", "think_time_us must be in [0, " + RequestSpec.MAX_TIME_US
          + "] microseconds, got " + think);
    }
    String growth = m.contextGrowth() == null ? "" : m.contextGrowth();
    if (!growth.equals("") && !growth.equals("accumulate")) {
      throw error(mp + ".context_growth", "context_growth must be accumulate or empty, got '" + growth + "'");
    }
    if (Boolean.TRUE.equals(m.singleSession())) {
      throw error(mp + ".single_session", "single_session (one session per client) is not simulated"
          + " here: every request a client sends at its arrival rate starts a session");
    }
    if (Boolean.FALSE.equals(closedLoop) && m.maxRounds() > 1) {
      throw error(path + ".closed_loop", "closed_loop: false (every round sent at a fixed time) is"
          + " not simulated here: a session's next round is sent think_time_us after the previous"
          + " one completes");
    }
    return new SessionSpec(m.maxRounds(), think, growth.equals("accumulate"));
  }

  private long timeout(String path, Long timeout, SessionSpec session) {
    if (timeout == null) {
      return session.multiTurn() ? SESSION_TIMEOUT_US : 0;
    }
    if (timeout < 0 || timeout > RequestSpec.MAX_TIME_US) {
      throw error(path + ".timeout", "timeout must be in [0, " + RequestSpec.MAX_TIME_US
          + "] microseconds (0 = none), got " + timeout);
    }
    return timeout;
  }

  /** The LoRA adapter every request of a client or cohort names (empty for none). */
  private String adapter(String path, String adapter) {
    String a = nz(adapter);
    if (a.contains(",") || a.contains("\"") || a.contains("\n") || a.contains("\r")) {
      throw error(path + ".adapter", "adapter '" + a + "' must not contain commas, quotes or line breaks"
          + " (traces store adapter names unquoted)");
    }
    return a;
  }

  private static String nz(String s) {
    return s == null ? "" : s;
  }

  // ---------------------------------------------------------------- cohorts

  private List<Member> cohort(GoSpecFile.Cohort c, String path, String version) {
    if (c == null) {
      throw error(path, "an empty cohort, expected a mapping (id, population, rate_fraction, ...)");
    }
    if (c.id() == null || c.id().isBlank()) {
      throw error(path, "a cohort needs an id (its members are named ID-0, ID-1, ...)");
    }
    if (c.population() == null || c.population() < 1 || c.population() > MAX_POPULATION) {
      throw error(c.population() == null ? path : path + ".population",
          "population must be a whole number in [1, " + MAX_POPULATION + "], got " + c.population());
    }
    if (c.rateFraction() == null || !(c.rateFraction() > 0) || c.rateFraction().isInfinite()) {
      throw error(c.rateFraction() == null ? path : path + ".rate_fraction",
          "rate_fraction must be a positive number (the cohort's share of aggregate_rate), got "
              + c.rateFraction());
    }
    String sharing = c.prefixSharing() == null ? "shared" : c.prefixSharing();
    if (!sharing.equals("shared") && !sharing.equals("per_member")) {
      throw error(path + ".prefix_sharing", "prefix_sharing must be shared or per_member, got '" + sharing + "'");
    }
    common(path, c.model(), c.streaming(), c.network(), c.multimodal(), c.sloTargetUs());
    int patterns = (c.diurnal() != null ? 1 : 0) + (c.spike() != null ? 1 : 0) + (c.drain() != null ? 1 : 0);
    if (patterns > 1) {
      throw error(path, "give at most one of diurnal, spike and drain per cohort here: their windows"
          + " would overlap, and overlapping windows have no single rate (split the cohort in two)");
    }
    List<GoSpecFile.Window> windows = new ArrayList<>();
    String patternPath = path + (c.diurnal() != null ? ".diurnal" : c.spike() != null ? ".spike"
        : c.drain() != null ? ".drain" : "");
    if (c.diurnal() != null) {
      windows.addAll(diurnal(c.diurnal(), path + ".diurnal"));
    } else if (c.spike() != null) {
      windows.add(spike(c.spike(), path + ".spike", c.population()));
    } else if (c.drain() != null) {
      windows.addAll(drain(c.drain(), path + ".drain"));
    }
    String sloClass = sloClass(path, c.sloClass(), version);
    SessionSpec session = session(path, c.reasoning(), c.closedLoop());
    long timeout = timeout(path, c.timeout(), session);
    String adapter = adapter(path, c.adapter());
    double fraction = c.rateFraction() / c.population();
    List<Member> out = new ArrayList<>();
    for (int j = 0; j < c.population(); j++) {
      String group = nz(c.prefixGroup());
      if (sharing.equals("per_member") && !group.isEmpty()) {
        group = group + "-" + j;
      }
      out.add(new Member(path, c.id() + "-" + j, nz(c.tenantId()), sloClass, fraction, c.arrival(),
          c.inputDistribution(), c.outputDistribution(), group, c.prefixLength(), windows, patternPath,
          timeout, session, nz(c.model()), adapter));
    }
    return out;
  }

  /** 24 one-hour windows, each active for the hour's share of the cosine day curve. */
  private List<GoSpecFile.Window> diurnal(GoSpecFile.Diurnal d, String path) {
    if (d.peakHour() == null || d.peakHour() < 0 || d.peakHour() > 23) {
      throw error(d.peakHour() == null ? path : path + ".peak_hour",
          "peak_hour must be a whole number in [0, 23], got " + d.peakHour());
    }
    if (d.peakToTroughRatio() == null || !(d.peakToTroughRatio() >= 1) || d.peakToTroughRatio().isInfinite()) {
      throw error(d.peakToTroughRatio() == null ? path : path + ".peak_to_trough_ratio",
          "peak_to_trough_ratio must be a number >= 1, got " + d.peakToTroughRatio());
    }
    double r = d.peakToTroughRatio();
    List<GoSpecFile.Window> out = new ArrayList<>();
    for (int h = 0; h < 24; h++) {
      double angle = 2 * Math.PI * (h - d.peakHour()) / 24.0;
      double multiplier = (1 + StrictMath.cos(angle)) / 2 * (1 - 1 / r) + 1 / r;
      long active = Math.max(1, Math.min(HOUR_US, (long) (HOUR_US * multiplier)));
      out.add(new GoSpecFile.Window(h * HOUR_US, h * HOUR_US + active, null, null, null, null));
    }
    return out;
  }

  private GoSpecFile.Window spike(GoSpecFile.Spike s, String path, int population) {
    if (s.startTimeUs() == null || s.startTimeUs() < 0 || s.durationUs() == null || s.durationUs() < 1) {
      throw error(path, "a spike needs start_time_us >= 0 and duration_us >= 1");
    }
    Double rate = s.traceRate() == null ? null : s.traceRate() / population;
    return new GoSpecFile.Window(s.startTimeUs(), s.startTimeUs() + s.durationUs(), rate, null, null, null);
  }

  /** Full rate until the drain starts, then ten segments active for 10/10, 9/10, ..., 1/10. */
  private List<GoSpecFile.Window> drain(GoSpecFile.Drain d, String path) {
    if (d.startTimeUs() == null || d.startTimeUs() < 0 || d.rampDurationUs() == null || d.rampDurationUs() < 0) {
      throw error(path, "a drain needs start_time_us >= 0 and ramp_duration_us >= 0");
    }
    List<GoSpecFile.Window> out = new ArrayList<>();
    if (d.startTimeUs() > 0) {
      out.add(new GoSpecFile.Window(0L, d.startTimeUs(), null, null, null, null));
    }
    long segment = Math.max(1, d.rampDurationUs() / DRAIN_SEGMENTS);
    for (int i = 0; i < DRAIN_SEGMENTS; i++) {
      long start = d.startTimeUs() + i * segment;
      long active = Math.max(1, (long) (segment * (DRAIN_SEGMENTS - i) / (double) DRAIN_SEGMENTS));
      out.add(new GoSpecFile.Window(start, start + active, null, null, null, null));
    }
    return out;
  }

  // ---------------------------------------------------------------- rates and windows

  private List<ClientSpec> clientSpecs(List<Member> members, Double aggregateRate) {
    boolean absolute = aggregateRate == null || aggregateRate == 0;
    if (!absolute && (!(aggregateRate > 0) || aggregateRate.isInfinite())) {
      throw error("aggregate_rate", "aggregate_rate must be a positive number of requests per second"
          + " (or 0: every window gives its own trace_rate), got " + aggregateRate);
    }
    Map<String, Integer> groupLength = new HashMap<>();
    Map<String, String> groupFirst = new HashMap<>();
    for (Member m : members) {
      int len = m.prefixLength() == null ? 0 : m.prefixLength();
      if (len < 0) {
        throw error(m.path() + ".prefix_length", "prefix_length must be >= 0, got " + len);
      }
      if (m.prefixGroup().isEmpty()) {
        noMeaning(m.path() + ".prefix_length", len > 0 ? len : null, "it needs a prefix_group");
        continue;
      }
      int effective = len > 0 ? len : DEFAULT_PREFIX_TOKENS;
      Integer first = groupLength.putIfAbsent(m.prefixGroup(), effective);
      groupFirst.putIfAbsent(m.prefixGroup(), m.id());
      if (first != null && first != effective) {
        note(m.path() + ".prefix_length", "group " + m.prefixGroup() + " has the prefix length of its"
            + " first client " + groupFirst.get(m.prefixGroup()) + " (" + first + " tokens), as in Go BLIS,"
            + " not " + effective);
      }
    }
    List<List<ActiveWindow>> spans = new ArrayList<>();
    for (Member m : members) {
      spans.add(m.session().closedLoopUsers() ? List.of() : windows(m, absolute));
    }
    double[] rates = new double[members.size()];
    if (!absolute) {
      for (int i = 0; i < members.size(); i++) {
        double denominator = 0;
        for (int j = 0; j < members.size(); j++) {
          if (coActive(spans.get(i), spans.get(j))) {
            denominator += members.get(j).fraction();
          }
        }
        rates[i] = aggregateRate * members.get(i).fraction() / denominator;
      }
    }
    List<ClientSpec> out = new ArrayList<>();
    Set<String> ids = new HashSet<>();
    for (int i = 0; i < members.size(); i++) {
      Member m = members.get(i);
      if (!ids.add(m.id())) {
        throw error(m.path(), "duplicate client id '" + m.id() + "'");
      }
      int prefix = m.prefixGroup().isEmpty() ? 0 : groupLength.get(m.prefixGroup());
      if (m.session().closedLoopUsers()) {
        // no arrival process: the users' requests follow their completions (the rate is a placeholder)
        LengthDistribution input = length(m.path() + ".input_distribution", m.input());
        LengthDistribution output = length(m.path() + ".output_distribution", m.output());
        out.add(locate(m.path(), () -> new ClientSpec(m.id(), m.tenant(), m.sloClass(),
            new ArrivalProcess.Constant(1), input, output, m.prefixGroup(), prefix, m.timeoutUs(), m.session(),
            List.of(), io.blis.workload.synthetic.RateCurve.NONE, m.model(), m.adapter(), AdapterPopularity.NONE)));
        continue;
      }
      out.addAll(split(m, spans.get(i), rates[i], absolute, prefix));
    }
    return out;
  }

  private List<ActiveWindow> windows(Member m, boolean absolute) {
    if (m.windows().isEmpty() && absolute) {
      throw error(m.path(), "aggregate_rate is 0 or absent (every window gives its own trace_rate),"
          + " but this client has no lifecycle windows: give aggregate_rate, or windows with trace_rate");
    }
    List<ActiveWindow> out = new ArrayList<>();
    for (int w = 0; w < m.windows().size(); w++) {
      GoSpecFile.Window win = m.windows().get(w);
      String wp = m.windowsPath() + (m.windowsPath().endsWith("windows") ? "[" + w + "]" : "");
      if (win == null || win.startUs() == null || win.endUs() == null) {
        throw error(wp, "a lifecycle window needs start_us and end_us");
      }
      if (win.startUs() < 0 || win.endUs() <= win.startUs() || win.endUs() > RequestSpec.MAX_TIME_US) {
        throw error(wp, "a lifecycle window needs 0 <= start_us < end_us <= " + RequestSpec.MAX_TIME_US
            + ", got [" + win.startUs() + ", " + win.endUs() + ")");
      }
      if (absolute && win.traceRate() == null) {
        throw error(wp, "aggregate_rate is 0 or absent, so every window needs trace_rate (requests/s)");
      }
      if (!absolute && win.traceRate() != null) {
        throw error(wp + ".trace_rate", "trace_rate with aggregate_rate > 0 (a weight of ServeGen's"
            + " per-window allocation) is not read here: give aggregate_rate 0 and absolute trace_rate"
            + " in every window, or drop trace_rate");
      }
      if (win.traceRate() != null) {
        locate(wp + ".trace_rate", () -> {
          ArrivalProcess.requireRate("trace_rate (requests/s)", win.traceRate());
          return null;
        });
      }
      out.add(new ActiveWindow(win.startUs(), win.endUs()));
    }
    List<ActiveWindow> sorted = new ArrayList<>(out);
    sorted.sort((a, b) -> Long.compare(a.startUs(), b.startUs()));
    for (int i = 1; i < sorted.size(); i++) {
      if (sorted.get(i).startUs() < sorted.get(i - 1).endUs()) {
        throw error(m.windowsPath(), "lifecycle windows overlap ([" + sorted.get(i - 1).startUs() + ", "
            + sorted.get(i - 1).endUs() + ") and [" + sorted.get(i).startUs() + ", " + sorted.get(i).endUs()
            + ")): a client sends at one rate at a time");
      }
    }
    return out;
  }

  /** Whether two clients' activity overlaps (a client without windows is always active). */
  private static boolean coActive(List<ActiveWindow> a, List<ActiveWindow> b) {
    if (a.isEmpty() || b.isEmpty()) {
      return true;
    }
    for (ActiveWindow x : a) {
      for (ActiveWindow y : b) {
        if (x.startUs() < y.endUs() && y.startUs() < x.endUs()) {
          return true;
        }
      }
    }
    return false;
  }

  /** The settings a window runs at: what sets one of this project's clients apart. */
  private record Setting(double rate, GoSpecFile.Arrival arrival, GoSpecFile.Dist input,
      GoSpecFile.Dist output) {}

  /**
   * One client of this project per distinct window setting: a client whose windows all run at its
   * own rate, arrival and lengths stays one client; windows with their own trace_rate, arrival or
   * distributions become clients {@code ID/w<i>} (i: the first such window).
   */
  private List<ClientSpec> split(Member m, List<ActiveWindow> spans, double rate, boolean absolute,
      int prefixLength) {
    Map<Setting, List<Integer>> groups = new LinkedHashMap<>();
    if (m.windows().isEmpty()) {
      groups.put(new Setting(rate, m.arrival(), m.input(), m.output()), List.of());
    }
    for (int w = 0; w < m.windows().size(); w++) {
      GoSpecFile.Window win = m.windows().get(w);
      Setting s = new Setting(absolute ? win.traceRate() : rate,
          win.arrival() != null ? win.arrival() : m.arrival(),
          win.inputDistribution() != null ? win.inputDistribution() : m.input(),
          win.outputDistribution() != null ? win.outputDistribution() : m.output());
      groups.computeIfAbsent(s, k -> new ArrayList<>()).add(w);
    }
    List<ClientSpec> out = new ArrayList<>();
    for (Map.Entry<Setting, List<Integer>> g : groups.entrySet()) {
      Setting s = g.getKey();
      List<Integer> idx = g.getValue();
      String wp = idx.isEmpty() || !m.windowsPath().endsWith("windows") ? m.path()
          : m.windowsPath() + "[" + idx.get(0) + "]";
      boolean own = !idx.isEmpty() && m.windowsPath().endsWith("windows");
      ArrivalProcess arrival = arrival(own && m.windows().get(idx.get(0)).arrival() != null
          ? wp + ".arrival" : m.path() + ".arrival", s.arrival(), s.rate());
      LengthDistribution input = length(own && m.windows().get(idx.get(0)).inputDistribution() != null
          ? wp + ".input_distribution" : m.path() + ".input_distribution", s.input());
      LengthDistribution output = length(own && m.windows().get(idx.get(0)).outputDistribution() != null
          ? wp + ".output_distribution" : m.path() + ".output_distribution", s.output());
      List<ActiveWindow> windows = new ArrayList<>();
      for (int w : idx) {
        windows.add(spans.get(w));
      }
      windows.sort((a, b) -> Long.compare(a.startUs(), b.startUs()));
      String id = groups.size() == 1 ? m.id() : m.id() + "/w" + idx.get(0);
      out.add(locate(m.path(), () -> new ClientSpec(id, m.tenant(), m.sloClass(), arrival, input, output,
          m.prefixGroup(), prefixLength, m.timeoutUs(), m.session(), windows, io.blis.workload.synthetic.RateCurve.NONE,
          m.model(), m.adapter(), AdapterPopularity.NONE)));
    }
    return out;
  }

  // ---------------------------------------------------------------- arrivals and lengths

  private ArrivalProcess arrival(String path, GoSpecFile.Arrival a, double rate) {
    if (a == null || a.process() == null) {
      throw error(a == null ? path.substring(0, path.lastIndexOf('.')) : path,
          "arrival.process is required: one of " + PROCESSES);
    }
    String process = a.process();
    if (!PROCESSES.contains(process)) {
      throw error(path + ".process", "unknown arrival process '" + process + "', expected one of " + PROCESSES);
    }
    boolean fitted = (process.equals("gamma") || process.equals("weibull")) && a.shape() != null
        && a.scale() != null && a.shape() > 0 && a.scale() > 0 && !a.shape().isInfinite() && !a.scale().isInfinite();
    if (fitted) {
      // Go BLIS: fitted shape and scale (microseconds) set the gaps whole; the rate is not used
      double shape = a.shape();
      return locate(path, () -> process.equals("gamma")
          ? new ArrivalProcess.Gamma(1e6 / (shape * a.scale()), 1 / Math.sqrt(shape))
          : ArrivalProcess.Weibull.ofShapeAndScale(shape, a.scale() / 1e6));
    }
    noMeaning(path + ".scale", a.scale(), "it is used with shape by gamma and weibull arrivals (both positive);"
        + " otherwise the mean gap is 1/rate (from aggregate_rate and rate_fraction, or trace_rate)");
    return locate(path, () -> switch (process) {
      case "poisson", "constant" -> {
        noMeaning(path + ".cv", a.cv(), process + " arrivals have no cv");
        noMeaning(path + ".shape", a.shape(), process + " arrivals have no shape");
        yield process.equals("poisson") ? new ArrivalProcess.Poisson(rate) : new ArrivalProcess.Constant(rate);
      }
      case "gamma" -> new ArrivalProcess.Gamma(rate, cv(path, a, true));
      default -> new ArrivalProcess.Weibull(rate, cv(path, a, false));
    });
  }

  /** The CV of a gamma or Weibull process: {@code cv}, or the one its {@code shape} implies. */
  private double cv(String path, GoSpecFile.Arrival a, boolean gamma) {
    if (a.shape() != null) {
      if (!(a.shape() > 0) || a.shape().isInfinite()) {
        throw error(path + ".shape", "shape must be a positive number, got " + a.shape());
      }
      noMeaning(path + ".cv", a.cv(), "shape is given and sets the CV (as in Go BLIS)");
      return gamma ? 1 / Math.sqrt(a.shape()) : ArrivalProcess.Weibull.cvForShape(a.shape());
    }
    if (a.cv() == null) {
      throw error(path, a.process() + " arrivals need cv (coefficient of variation of the gaps) or shape");
    }
    if (!(a.cv() > 0) || a.cv().isInfinite()) {
      throw error(path + ".cv", "cv must be a positive number, got " + a.cv());
    }
    return a.cv();
  }

  private static final Map<String, List<String>> PARAMS = new TreeMap<>(Map.of(
      "gaussian", List.of("mean", "std_dev", "min", "max"),
      "exponential", List.of("mean", "min", "max"),
      "lognormal", List.of("mu", "sigma", "min", "max"),
      "pareto_lognormal", List.of("alpha", "xm", "mu", "sigma", "mix_weight"),
      "constant", List.of("value"),
      "empirical", List.of("TOKENS: PROBABILITY")));

  private LengthDistribution length(String path, GoSpecFile.Dist d) {
    if (d == null) {
      throw error(path.substring(0, path.lastIndexOf('.')), key(path) + " is required: {type, params}"
          + " with type one of " + PARAMS.keySet());
    }
    if (d.type() == null || !PARAMS.containsKey(d.type())) {
      throw error(d.type() == null ? path : path + ".type", "unknown distribution type '" + d.type()
          + "', expected one of " + PARAMS.keySet());
    }
    String type = d.type();
    Map<String, Double> p = d.params() == null ? Map.of() : d.params();
    String pp = path + ".params";
    if (d.file() != null) {
      throw error(path + ".file", "file (an empirical PDF file) is not read here: give the"
          + " probabilities inline, params: {TOKENS: PROBABILITY, ...}");
    }
    if (!type.equals("empirical")) {
      for (Map.Entry<String, Double> e : p.entrySet()) {
        if (!PARAMS.get(type).contains(e.getKey())) {
          throw error(pp + "." + e.getKey(), "unknown parameter '" + e.getKey() + "' of a " + type
              + " distribution, expected " + String.join(", ", PARAMS.get(type)));
        }
        if (e.getValue() == null || !Double.isFinite(e.getValue())) {
          throw error(pp + "." + e.getKey(), e.getKey() + " must be a finite number, got " + e.getValue());
        }
      }
    }
    centreWithinTokens(pp, type, p);
    return locate(path, () -> switch (type) {
      case "gaussian" -> new LengthSpec(need(pp, type, p, "mean"), need(pp, type, p, "std_dev"),
          Math.max(1, whole(pp, type, p, "min", null)), Math.max(1, whole(pp, type, p, "max", null)));
      case "exponential" -> new LengthDistribution.Exponential(need(pp, type, p, "mean"),
          Math.max(1, whole(pp, type, p, "min", 1)), whole(pp, type, p, "max", RequestSpec.MAX_TOKENS));
      case "lognormal" -> new LengthDistribution.LogNormal(need(pp, type, p, "mu"), need(pp, type, p, "sigma"),
          Math.max(1, whole(pp, type, p, "min", 1)), whole(pp, type, p, "max", RequestSpec.MAX_TOKENS));
      case "pareto_lognormal" -> new LengthDistribution.ParetoLogNormal(need(pp, type, p, "alpha"),
          need(pp, type, p, "xm"), need(pp, type, p, "mu"), need(pp, type, p, "sigma"),
          need(pp, type, p, "mix_weight"), 1, RequestSpec.MAX_TOKENS);
      case "constant" -> new LengthDistribution.Constant(Math.max(1, constantTokens(pp, type, p)));
      default -> empirical(pp, p);
    });
  }

  /**
   * Refuses a distribution whose lengths centre beyond {@link RequestSpec#MAX_TOKENS}: a gaussian's
   * or exponential's mean, a lognormal's median {@code exp(mu)}, a Pareto part's smallest value
   * {@code xm}. Like a gaussian's {@code max} and a constant's {@code value}, which are refused
   * beyond the token limit rather than cut to it: otherwise most lengths would be cut to the limit
   * (a distribution's {@code max} defaults to it), requests of millions of tokens no model takes.
   */
  private void centreWithinTokens(String path, String type, Map<String, Double> p) {
    if (type.equals("empirical")) {
      return; // its keys are token counts, bounded one by one
    }
    double limit = RequestSpec.MAX_TOKENS;
    String why = " (the most tokens a request may have, as for a gaussian's max)";
    for (String key : List.of("mean", "xm")) {
      Double v = p.get(key);
      if (v != null && v > limit) {
        throw error(path + "." + key, key + " must be at most " + RequestSpec.MAX_TOKENS + " tokens" + why
            + ", got " + v);
      }
    }
    Double mu = p.get("mu");
    if (mu != null && mu > StrictMath.log(limit)) {
      throw error(path + ".mu", String.format(java.util.Locale.ROOT, "mu must be at most ln(%d) = %.4f, a median"
          + " length exp(mu) of at most %d tokens%s, got %s", RequestSpec.MAX_TOKENS, StrictMath.log(limit),
          RequestSpec.MAX_TOKENS, why, mu));
    }
  }

  /** A constant distribution's value, refused beyond the token limit rather than cut to it. */
  private int constantTokens(String path, String type, Map<String, Double> p) {
    double v = need(path, type, p, "value");
    if (v > RequestSpec.MAX_TOKENS) {
      throw error(path + ".value", "value must be at most " + RequestSpec.MAX_TOKENS + " tokens, got " + v);
    }
    return (int) v;
  }

  private double need(String path, String type, Map<String, Double> p, String key) {
    Double v = p.get(key);
    if (v == null) {
      throw error(p.isEmpty() ? path.substring(0, path.lastIndexOf('.')) : path, "a " + type
          + " distribution needs params " + String.join(", ", PARAMS.get(type)) + "; " + key + " is missing");
    }
    return v;
  }

  private int whole(String path, String type, Map<String, Double> p, String key, Integer dflt) {
    Double v = p.get(key);
    if (v == null) {
      return dflt != null ? dflt : (int) need(path, type, p, key);
    }
    if (v != Math.rint(v) || Math.abs(v) > RequestSpec.MAX_TOKENS) {
      throw error(path + "." + key, key + " must be a whole number of tokens in [0, "
          + RequestSpec.MAX_TOKENS + "], got " + v);
    }
    return (int) (double) v;
  }

  private LengthDistribution empirical(String path, Map<String, Double> p) {
    if (p.isEmpty()) {
      throw error(path.substring(0, path.lastIndexOf('.')),
          "an empirical distribution needs params: {TOKENS: PROBABILITY, ...}");
    }
    int[] values = new int[p.size()];
    double[] probabilities = new double[p.size()];
    int i = 0;
    for (Map.Entry<String, Double> e : new TreeMap<>(p).entrySet()) {
      try {
        values[i] = Integer.parseInt(e.getKey().strip());
      } catch (NumberFormatException ex) {
        throw error(path + "." + e.getKey(), "an empirical key is a token count, got '" + e.getKey() + "'");
      }
      probabilities[i++] = Objects.requireNonNullElse(e.getValue(), Double.NaN);
    }
    return new LengthDistribution.Empirical(values, probabilities);
  }
}
