package io.blis.engine;

import io.blis.api.AdmissionDecision;
import io.blis.api.AdmissionPolicy;
import io.blis.api.AdmissionPolicyProvider;
import io.blis.api.ProviderContext;
import io.blis.api.Router;
import io.blis.api.RouterProvider;

/**
 * A router and an admission policy as a third party would write them: registered only in this
 * test source set's {@code META-INF/services}, selected by name.
 */
final class ThirdPartyPolicies {

  private ThirdPartyPolicies() {}

  /** {@code test-last-instance}: every request to the highest-index instance. */
  public static final class LastInstanceRouterProvider implements RouterProvider {
    @Override
    public String name() {
      return "test-last-instance";
    }

    @Override
    public Router create(ProviderContext context) {
      return (request, cluster) -> cluster.size() - 1;
    }
  }

  /** {@code test-even-ids}: admits requests with an even id, rejects the others. */
  public static final class EvenIdsAdmissionProvider implements AdmissionPolicyProvider {
    @Override
    public String name() {
      return "test-even-ids";
    }

    @Override
    public AdmissionPolicy create(ProviderContext context) {
      return (request, cluster) -> request.id() % 2 == 0 ? AdmissionDecision.ADMIT
          : AdmissionDecision.reject("odd_id");
    }
  }
}
