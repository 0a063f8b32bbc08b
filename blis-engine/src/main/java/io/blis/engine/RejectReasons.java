package io.blis.engine;

/** Why an instance rejects a request when it reaches the waiting queue (the reasons results count). */
final class RejectReasons {

  static final String PROMPT_TOO_LONG = "prompt_exceeds_max_model_len";
  static final String TOTAL_TOO_LONG = "prompt_plus_output_exceeds_max_model_len";
  static final String KV_CAPACITY = "exceeds_kv_cache_capacity";
  /** The request names a LoRA adapter the instance does not serve (vLLM answers 404). */
  static final String ADAPTER_NOT_SERVED = "adapter_not_served";

  private RejectReasons() {}
}
