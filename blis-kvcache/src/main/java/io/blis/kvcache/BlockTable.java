package io.blis.kvcache;

/**
 * The KV blocks one request holds, in token order, plus the hashes of its prompt's full blocks
 * (computed once, when the table is created). Created by {@link KvBlockPool#newTable}; mutated
 * only by its pool.
 */
public final class BlockTable {

  final long[] promptBlockHashes;
  final int promptTokens;
  int[] blockIds;
  int numBlocks;
  /** Leading blocks of this table whose prompt hash is registered (or was, when claimed). */
  int hashedBlocks;
  /** This request's number among the tables of its pool (keys its generated blocks when they are offloaded). */
  long number;
  /** Blocks offloaded up to here (when blocks of generated tokens are offloaded too). */
  int offloadedBlocks;
  /** Blocks held besides the tokens' ({@link ResidentBlocks}): recurrent states, sliding windows. */
  int[] residentIds = new int[0];
  int numResident;
  /** Tokens the table held after its last admission or growth (the computed tokens before the next step). */
  long tokens;

  BlockTable(long[] promptBlockHashes, int promptTokens, int expectedBlocks) {
    this.promptBlockHashes = promptBlockHashes;
    this.promptTokens = promptTokens;
    this.blockIds = new int[Math.max(1, expectedBlocks)];
  }

  /** Number of blocks currently held. */
  public int numBlocks() {
    return numBlocks;
  }

  /** The id of the {@code index}-th held block. */
  public int blockId(int index) {
    if (index < 0 || index >= numBlocks) {
      throw new IndexOutOfBoundsException("block " + index + " of " + numBlocks);
    }
    return blockIds[index];
  }

  /** Number of full prompt blocks (the blocks that can be shared through the prefix cache). */
  public int promptFullBlocks() {
    return promptBlockHashes.length;
  }

  /** Prompt length in tokens. */
  public int promptTokens() {
    return promptTokens;
  }

  /** Number of blocks held besides the tokens' (recurrent states, sliding-window groups). */
  public int residentBlocks() {
    return numResident;
  }

  void addResident(int blockId) {
    if (numResident == residentIds.length) {
      residentIds = java.util.Arrays.copyOf(residentIds, Math.max(4, residentIds.length * 2));
    }
    residentIds[numResident++] = blockId;
  }

  void add(int blockId) {
    if (numBlocks == blockIds.length) {
      blockIds = java.util.Arrays.copyOf(blockIds, blockIds.length * 2);
    }
    blockIds[numBlocks++] = blockId;
  }
}
