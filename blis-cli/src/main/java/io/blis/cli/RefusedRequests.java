package io.blis.cli;

import io.blis.engine.result.MetricsSummary;
import io.blis.engine.result.SimulationResult;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import picocli.CommandLine;

/**
 * Requests the deployment refused because of how it is set up, not because a policy chose to shed
 * them: a prompt longer than the max-model-len, more KV than an instance holds, a model or LoRA
 * adapter nobody serves. The result counts them ({@code rejected_by_reason}); this says so on
 * stderr, because a run whose requests were refused measures less than it seems to: one {@code
 * warning:} line when some were, and a refusal (no result) when every request was.
 */
final class RefusedRequests {

  private RefusedRequests() {}

  /**
   * Checks {@code result}'s refusals: prints one warning line on {@code cl}'s stderr when some
   * requests were refused for a reason of the deployment's settings, and refuses the run when every
   * request was.
   *
   * @param loraOn whether the deployment serves LoRA adapters (to say why an adapter was not served)
   * @throws IllegalArgumentException when every request was refused so
   */
  static void check(CommandLine cl, SimulationResult result, boolean loraOn) {
    MetricsSummary o = result.overall();
    long refused = 0;
    List<String> counts = new ArrayList<>();
    Set<String> checks = new LinkedHashSet<>();
    for (String[] r : reasons(loraOn)) {
      long n = o.rejectedByReason().getOrDefault(r[0], 0L);
      if (n > 0) {
        refused += n;
        counts.add(n + " " + r[0] + " (" + r[1] + ")");
        checks.add(r[2]);
      }
    }
    if (refused == 0) {
      return;
    }
    String what = String.join(", ", counts) + "; " + String.join("; ", checks);
    if (refused == o.injectedRequests()) {
      throw new IllegalArgumentException("every request was refused, nothing was served: " + what);
    }
    cl.getErr().println("warning: " + refused + " of " + o.injectedRequests() + " requests were refused: " + what
        + "; the result counts them in rejected_by_reason");
    cl.getErr().flush();
  }

  /**
   * The reasons of the deployment's settings, in the order messages give them: each its name in the
   * result, what the requests asked for, and what to check.
   */
  private static List<String[]> reasons(boolean loraOn) {
    String len = "check --max-model-len (--prefill-max-model-len, --decode-max-model-len) and the workload's lengths";
    return List.of(
        new String[] {"prompt_exceeds_max_model_len", "a prompt longer than the max-model-len", len},
        new String[] {"prompt_plus_output_exceeds_max_model_len", "prompt plus output longer than the max-model-len",
            len},
        new String[] {"exceeds_kv_cache_capacity", "more KV than an instance holds",
            "check --total-kv-blocks, --gpu-memory-utilization and the workload's lengths"},
        new String[] {"model_not_served", "a model no pool serves", "check the workload's models and the pools'"},
        loraOn
            ? new String[] {"adapter_not_served", "a LoRA adapter the registry does not list",
                "add the adapters to the --lora-config registry, or leave the registry out to serve any adapter"}
            : new String[] {"adapter_not_served", "a LoRA adapter, and LoRA is off",
                "give --enable-lora, --max-loras or --lora-config to serve the adapters"});
  }
}
