package io.blis.engine.cluster;

import com.fasterxml.jackson.core.JsonToken;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Reads Go BLIS's {@code --kv-offload-config} file, a top-level {@code kv_offload:} block in
 * vLLM's offloading connector's terms, as far as this project models it: one CPU tier of {@code
 * cpu_bytes_to_use} bytes (the same tier as {@code --kv-offloading-size-gib}), holding computed
 * prompt blocks of the GPU's block size, least recently used first out.
 *
 * <pre>
 * kv_offload:
 *   cpu_bytes_to_use: 17179869184   # required
 *   block_size: 16                  # optional: the GPU's block size (or blocks_per_chunk: 1)
 *   eviction_policy: lru            # lru only
 *   offload_prompt_only: true       # true only (vLLM's default)
 *   tokens_per_hash: 16             # optional: the GPU's block size
 *   self_describing_kv_events: false
 *   store_threshold: 0              # 0 or 1
 * </pre>
 *
 * <p>What it does not model is refused in one line naming the file, line and key, never dropped:
 * secondary tiers (disk, object stores), offload blocks larger than the GPU's, ARC eviction,
 * offloading decode blocks.
 */
public final class KvOffloadFile {

  private static final List<String> KEYS = List.of("cpu_bytes_to_use", "block_size", "blocks_per_chunk",
      "eviction_policy", "offload_prompt_only", "self_describing_kv_events", "tokens_per_hash", "store_threshold",
      "secondary_tiers");

  private KvOffloadFile() {}

  /**
   * The CPU tier's size in bytes (summed over the tensor-parallel ranks, as vLLM's {@code
   * --kv-offloading-size}) that {@code file} gives, checked against the GPU's {@code blockSize}.
   *
   * @throws IllegalArgumentException naming the file, line and key of anything this project
   *     cannot simulate as written
   */
  public static double cpuBytes(Path file, int blockSize) {
    NodeReader r = new NodeReader(file.toString());
    YamlNode block = r.topBlock(file, "KV offload configuration", "kv_offload");
    Map<String, YamlNode> m = r.mapping(block, "kv_offload", KEYS);
    if (!m.containsKey("cpu_bytes_to_use")) {
      throw r.error(block, "kv_offload: give cpu_bytes_to_use (bytes of host memory for the CPU tier)");
    }
    double bytes = r.number(m.get("cpu_bytes_to_use"), "cpu_bytes_to_use");
    if (!(bytes >= 0) || Double.isInfinite(bytes)) {
      throw r.error(m.get("cpu_bytes_to_use"), "cpu_bytes_to_use must be a finite number of bytes >= 0");
    }
    if (m.containsKey("block_size") && m.containsKey("blocks_per_chunk")) {
      throw r.error(m.get("blocks_per_chunk"), "give block_size or blocks_per_chunk, not both");
    }
    if (m.containsKey("block_size") && r.whole(m.get("block_size"), "block_size", 1) != blockSize) {
      throw r.error(m.get("block_size"), "block_size other than the GPU's (" + blockSize + " tokens) is not modelled"
          + " here: the CPU tier holds the GPU's blocks");
    }
    if (m.containsKey("blocks_per_chunk") && r.whole(m.get("blocks_per_chunk"), "blocks_per_chunk", 1) != 1) {
      throw r.error(m.get("blocks_per_chunk"), "blocks_per_chunk other than 1 is not modelled here: the CPU tier holds"
          + " the GPU's blocks");
    }
    if (m.containsKey("tokens_per_hash") && r.whole(m.get("tokens_per_hash"), "tokens_per_hash", 1) != blockSize) {
      throw r.error(m.get("tokens_per_hash"), "tokens_per_hash other than the GPU's block size (" + blockSize
          + ") is not modelled here");
    }
    if (m.containsKey("eviction_policy") && !r.string(m.get("eviction_policy"), "eviction_policy").equals("lru")) {
      throw r.error(m.get("eviction_policy"), "eviction_policy: only lru is modelled here (got '"
          + m.get("eviction_policy").text() + "')");
    }
    if (m.containsKey("offload_prompt_only") && !flag(r, m.get("offload_prompt_only"), "offload_prompt_only")) {
      throw r.error(m.get("offload_prompt_only"), "offload_prompt_only: false (offloading decode blocks too) is not"
          + " modelled here; the CPU tier holds prompt blocks, vLLM's default");
    }
    if (m.containsKey("self_describing_kv_events")) {
      flag(r, m.get("self_describing_kv_events"), "self_describing_kv_events"); // events, not timing: no effect
    }
    if (m.containsKey("store_threshold") && r.whole(m.get("store_threshold"), "store_threshold", 0) >= 2) {
      throw r.error(m.get("store_threshold"), "store_threshold must be 0 or 1 (vLLM refuses 2 and more)");
    }
    YamlNode tiers = m.get("secondary_tiers");
    if (tiers != null && !tiers.isNull() && (tiers.list() == null || !tiers.list().isEmpty())) {
      throw r.error(tiers, "secondary_tiers (disk or remote stores behind the CPU tier) are not modelled here; give"
          + " the CPU tier alone");
    }
    return bytes;
  }

  private static boolean flag(NodeReader r, YamlNode n, String key) {
    if (n.token() != JsonToken.VALUE_TRUE && n.token() != JsonToken.VALUE_FALSE) {
      throw r.error(n, key + " must be true or false, got " + NodeReader.describe(n));
    }
    return n.token() == JsonToken.VALUE_TRUE;
  }
}
