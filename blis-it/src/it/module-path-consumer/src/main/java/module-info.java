/**
 * A consumer on the module path. The BLIS jars are automatic modules named by their manifests'
 * Automatic-Module-Name; the plugins (embed-consumer's sources) are registered with provides, no
 * META-INF/services needed.
 */
module com.example.modpath {
  requires io.blis.api;
  requires io.blis.engine;
  requires io.blis.workload;
  requires io.blis.latency;

  provides io.blis.api.LatencyModelProvider with com.example.embed.ConstantStepModelProvider;
  provides io.blis.api.SchedulerProvider with com.example.embed.ShortestPromptFirstProvider;
}
