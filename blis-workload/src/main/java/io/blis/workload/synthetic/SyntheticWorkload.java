package io.blis.workload.synthetic;

import io.blis.workload.RequestSource;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Entry point for synthetic workloads: clients with arrival processes and length distributions,
 * generated lazily (each request is built when the engine pulls it).
 */
public final class SyntheticWorkload {

  private SyntheticWorkload() {}

  /**
   * One client with Poisson arrivals at {@code ratePerS} requests per second (the first arrival
   * one gap after time 0), Gaussian prompt and output lengths, and an optional shared prefix of
   * {@code prefixTokens} identical token ids at the start of every prompt (prefix group {@code
   * "shared"}); the prompt is the prefix followed by {@code input.sample()} tokens of random ids.
   *
   * @param numRequests number of requests to generate
   * @param seed seed of every random choice; the same seed gives the same requests
   */
  public static RequestSource poissonGaussian(
      double ratePerS,
      long numRequests,
      LengthSpec input,
      LengthSpec output,
      int prefixTokens,
      long seed) {
    return poissonGaussian(ratePerS, numRequests, input, output, prefixTokens, seed, AdapterPopularity.NONE);
  }

  /**
   * As {@link #poissonGaussian(double, long, LengthSpec, LengthSpec, int, long)}, each request
   * naming a LoRA adapter drawn from {@code adapters} (none for {@link AdapterPopularity#NONE},
   * which gives the same requests as that method).
   */
  public static RequestSource poissonGaussian(
      double ratePerS,
      long numRequests,
      LengthSpec input,
      LengthSpec output,
      int prefixTokens,
      long seed,
      AdapterPopularity adapters) {
    return defaultClient("default", new ArrivalProcess.Poisson(ratePerS), numRequests, input, output, prefixTokens,
        SessionSpec.NONE, adapters, seed);
  }

  /**
   * The lengths of {@link #poissonGaussian} sent by {@code users} closed-loop users instead of a
   * rate ({@link SessionSpec#users}): each sends its next request {@code thinkTimeUs} after its
   * previous one completed; {@code numRequests} counts every request.
   */
  public static RequestSource closedLoopUsers(int users, long thinkTimeUs, long numRequests, LengthSpec input,
      LengthSpec output, int prefixTokens, long seed) {
    // the rate is a placeholder: users have no arrival process
    return defaultClient("users", new ArrivalProcess.Constant(1), numRequests, input, output, prefixTokens,
        SessionSpec.users(users, thinkTimeUs), AdapterPopularity.NONE, seed);
  }

  /** The command line's one-client workload: its lengths, an optional shared prefix, one SLO class. */
  private static RequestSource defaultClient(String id, ArrivalProcess arrival, long numRequests, LengthSpec input,
      LengthSpec output, int prefixTokens, SessionSpec session, AdapterPopularity adapters, long seed) {
    if (numRequests < 0) {
      throw new IllegalArgumentException("number of requests must be >= 0, got " + numRequests);
    }
    if (prefixTokens < 0 || prefixTokens >= io.blis.workload.RequestSpec.MAX_TOKENS) {
      throw new IllegalArgumentException("prefix tokens must be in [0, "
          + (io.blis.workload.RequestSpec.MAX_TOKENS - 1) + "], got " + prefixTokens);
    }
    ClientSpec client = new ClientSpec(id, "", "standard", arrival, input, output,
        prefixTokens > 0 ? "shared" : "", prefixTokens, 0, session, List.of(), RateCurve.NONE, "", "", adapters);
    return of(List.of(client), seed, numRequests, Long.MAX_VALUE);
  }

  /**
   * Merges the clients' request streams in arrival order (ties go to the earlier client).
   *
   * @param maxOpenLoopRequests stop after this many open-loop requests (session first rounds
   *     count, their follow-up rounds do not)
   * @param horizonUs no request (open-loop or follow-up) arrives after this time, microseconds
   * @throws IllegalArgumentException when the workload would send no request although {@code
   *     maxOpenLoopRequests} is positive (every client's first arrival is after the horizon or its
   *     lifecycle windows), or when a client's rate is so low that a request it must send would
   *     arrive after {@link io.blis.workload.RequestSpec#MAX_TIME_US} (this is found when that
   *     request is pulled)
   */
  public static RequestSource of(
      List<ClientSpec> clients, long seed, long maxOpenLoopRequests, long horizonUs) {
    check(clients, maxOpenLoopRequests, horizonUs);
    return new SyntheticSource(List.copyOf(clients), seed, maxOpenLoopRequests, horizonUs);
  }

  private static void check(List<ClientSpec> clients, long maxOpenLoopRequests, long horizonUs) {
    if (clients.isEmpty()) {
      throw new IllegalArgumentException("a synthetic workload needs at least one client");
    }
    Set<String> ids = new HashSet<>();
    for (ClientSpec c : clients) {
      if (!ids.add(c.id())) {
        throw new IllegalArgumentException("duplicate client id '" + c.id() + "'");
      }
    }
    if (maxOpenLoopRequests < 0 || horizonUs < 0) {
      throw new IllegalArgumentException("request count and horizon must be >= 0");
    }
  }

  /**
   * As {@link #of}, with {@code maxRequests} counted as Go BLIS counts a spec's {@code
   * num_requests}: every round of a multi-turn session counts, at the time Go BLIS stamps it before
   * simulating (its previous round's time, plus the think time, plus 1 us per output token of that
   * round), among the other clients' requests by time, and a client starts no session once its
   * sessions' rounds reach twice the count. The sessions whose first round falls within the count
   * then run every round, each sent a think time after the previous one ends, as here. A count
   * that is all single requests is the same as {@link #of}'s.
   */
  public static RequestSource ofGoBlis(List<ClientSpec> clients, long seed, long maxRequests, long horizonUs) {
    check(clients, maxRequests, horizonUs);
    return new SyntheticSource(List.copyOf(clients), seed, maxRequests, horizonUs, true);
  }
}
