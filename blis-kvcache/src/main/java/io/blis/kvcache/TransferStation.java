package io.blis.kvcache;

import java.util.ArrayDeque;
import java.util.List;
import java.util.PriorityQueue;

/**
 * The I/O threads of the secondary offload tiers as a queueing station: per tier, a read queue and
 * a write queue served by the tier's read-preferring and write-preferring threads (a thread takes
 * from its own queue first and from the other when its own is empty, and idles only when both are
 * empty). A job moves a run of blocks in one direction and is never split. Completion order is a
 * total order on (completion time, submission time, tier, direction, job number), so runs are
 * deterministic.
 */
final class TransferStation {

  /** A transfer between the CPU tier and a secondary tier. */
  static final class Job {
    final long id;
    final int tier;
    final boolean read;
    final long bytes;
    final long submitUs;
    /** The blocks moved: for a write one hash, for a read the run. */
    final long[] hashes;
    final int from;
    final int count;
    long completeUs;
    boolean byReadThread;

    Job(long id, int tier, boolean read, long bytes, long submitUs, long[] hashes, int from, int count) {
      this.id = id;
      this.tier = tier;
      this.read = read;
      this.bytes = bytes;
      this.submitUs = submitUs;
      this.hashes = hashes;
      this.from = from;
      this.count = count;
    }
  }

  /** Receives each finished job, in completion order. */
  interface Done {
    void finished(Job job);
  }

  private final OffloadTier[] tiers;
  private final ArrayDeque<Job>[] readQueue;
  private final ArrayDeque<Job>[] writeQueue;
  private final int[] idleReadThreads;
  private final int[] idleWriteThreads;
  private final int[] readsInService;
  private final int[] writesInService;
  private final PriorityQueue<Job> inService = new PriorityQueue<>((a, b) -> {
    int c = Long.compare(a.completeUs, b.completeUs);
    if (c == 0) {
      c = Long.compare(a.submitUs, b.submitUs);
    }
    if (c == 0) {
      c = Integer.compare(a.tier, b.tier);
    }
    if (c == 0) {
      c = Boolean.compare(!a.read, !b.read);
    }
    return c != 0 ? c : Long.compare(a.id, b.id);
  });
  private long nextId;
  private long nowUs;

  @SuppressWarnings("unchecked")
  TransferStation(List<OffloadTier> tiers) {
    int n = tiers.size();
    this.tiers = tiers.toArray(new OffloadTier[0]);
    readQueue = new ArrayDeque[n];
    writeQueue = new ArrayDeque[n];
    idleReadThreads = new int[n];
    idleWriteThreads = new int[n];
    readsInService = new int[n];
    writesInService = new int[n];
    for (int t = 0; t < n; t++) {
      readQueue[t] = new ArrayDeque<>();
      writeQueue[t] = new ArrayDeque<>();
      idleReadThreads[t] = this.tiers[t].readThreads();
      idleWriteThreads[t] = this.tiers[t].writeThreads();
    }
  }

  /**
   * Queues a job at the station's current time (see {@link #advance}) and starts it if a thread
   * is idle.
   */
  Job submit(int tier, boolean read, long bytes, long[] hashes, int from, int count) {
    Job j = new Job(++nextId, tier, read, bytes, nowUs, hashes, from, count);
    (read ? readQueue : writeQueue)[tier].addLast(j);
    startQueued(tier);
    return j;
  }

  /** Finishes, in order, every job done by {@code toUs}; a thread freed takes the next job at once. */
  void advance(long toUs, Done done) {
    while (!inService.isEmpty() && inService.peek().completeUs <= toUs) {
      Job j = inService.poll();
      nowUs = Math.max(nowUs, j.completeUs);
      if (j.read) {
        readsInService[j.tier]--;
      } else {
        writesInService[j.tier]--;
      }
      if (j.byReadThread) {
        idleReadThreads[j.tier]++;
      } else {
        idleWriteThreads[j.tier]++;
      }
      done.finished(j);
      startQueued(j.tier);
    }
    nowUs = Math.max(nowUs, toUs);
  }

  /** When the next job in service finishes; {@link Long#MAX_VALUE} when none is. */
  long nextCompletionUs() {
    return inService.isEmpty() ? Long.MAX_VALUE : inService.peek().completeUs;
  }

  /** Jobs queued or in service. */
  int pending() {
    int n = inService.size();
    for (int t = 0; t < tiers.length; t++) {
      n += readQueue[t].size() + writeQueue[t].size();
    }
    return n;
  }

  private void startQueued(int t) {
    startOn(t, idleReadThreads, readQueue[t], writeQueue[t], true);
    startOn(t, idleWriteThreads, writeQueue[t], readQueue[t], false);
  }

  /**
   * Hands queued jobs to tier {@code t}'s idle threads of one direction ({@code idle}, {@code
   * read}): its own direction's jobs first, the other's when none waits.
   */
  private void startOn(int t, int[] idle, ArrayDeque<Job> own, ArrayDeque<Job> other, boolean read) {
    while (idle[t] > 0) {
      Job j = own.isEmpty() ? other.pollFirst() : own.pollFirst();
      if (j == null) {
        break;
      }
      idle[t]--;
      start(j, read);
    }
  }

  private void start(Job j, boolean readThread) {
    j.byReadThread = readThread;
    int inServiceNow = j.read ? ++readsInService[j.tier] : ++writesInService[j.tier];
    j.completeUs = nowUs + tiers[j.tier].transferUs(j.read, j.bytes, inServiceNow);
    inService.add(j);
  }
}
