package io.blis.engine.result;

import io.blis.workload.RequestOutcome;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.ref.Cleaner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.AbstractSequentialList;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.ListIterator;
import java.util.NoSuchElementException;
import java.util.PriorityQueue;

/**
 * A list a run builds one element at a time and reads back in full when it writes its result, in
 * bounded memory: up to a run's worth of elements are held as objects; each full run is written to
 * a temporary file in a compact binary form (sorted first, when the list has an order) and read
 * back each time the list is iterated, merged with the others in order. So a decision trace or the
 * per-request records of millions of requests cost disk, not heap. The files are deleted when the
 * list is no longer reachable, or when the JVM exits; those of a process killed by SIGKILL, by the
 * next BLIS process that spills ({@link OutputFiles#sweepStale}).
 *
 * <p>Iterate it (as the result writers do); {@code get(i)} walks from the start. Read-only once
 * {@link #seal sealed}; appending after reading is not supported.
 *
 * @param <T> the element type
 */
public final class SpilledList<T> extends AbstractSequentialList<T> {

  /** Elements held as objects before they are written out as a run. */
  public static final int RUN = 100_000;

  private static final Cleaner CLEANER = Cleaner.create();

  /** How an element is written and read back. */
  interface Codec<T> {
    void write(DataOutputStream out, T value) throws IOException;

    T read(DataInputStream in) throws IOException;
  }

  private final Codec<T> codec;
  private final Comparator<? super T> order;
  private final int runSize;
  private final String what;
  private final ArrayList<T> buffer = new ArrayList<>();
  private final Runs runs = new Runs();
  private long size;
  private boolean sealed;

  SpilledList(Codec<T> codec, Comparator<? super T> order, int runSize, String what) {
    this.codec = codec;
    this.order = order;
    this.runSize = runSize;
    this.what = what;
    CLEANER.register(this, runs);
  }

  /** The decisions of a decision trace, in the order taken. */
  public static SpilledList<RoutingDecision> decisions() {
    return decisions(RUN);
  }

  static SpilledList<RoutingDecision> decisions(int runSize) {
    return new SpilledList<>(DECISIONS, null, runSize, "decision trace");
  }

  /** Per-request records, read back in order of arrival (then id), as a run reports them. */
  public static SpilledList<RequestRecord> requestRecords() {
    return requestRecords(RUN);
  }

  static SpilledList<RequestRecord> requestRecords(int runSize) {
    return new SpilledList<>(RECORDS,
        Comparator.comparingLong(RequestRecord::arrivalUs).thenComparingLong(RequestRecord::id), runSize,
        "per-request records");
  }

  /** The run files; a cleaning action of its own, so that it holds no list. */
  private static final class Runs implements Runnable {
    final List<Path> files = new ArrayList<>();

    @Override
    public void run() {
      for (Path f : files) {
        try {
          Files.deleteIfExists(f);
        } catch (IOException ignored) {
          // a temporary file the system cleans up eventually
        }
      }
    }
  }

  /** Appends an element. */
  public void append(T value) {
    if (sealed) {
      throw new IllegalStateException("a sealed list takes no more elements");
    }
    size++;
    buffer.add(value);
    if (buffer.size() >= runSize) {
      spill();
    }
  }

  private void spill() {
    sortBuffer();
    try {
      // named so that, should this process be killed (SIGKILL) before it deletes the file, the next
      // BLIS process to spill or write into the directory deletes it (OutputFiles.sweepStale)
      Path file = OutputFiles.createScratch(Path.of(System.getProperty("java.io.tmpdir")),
          "blis-" + what.replace(' ', '-') + ".bin");
      file.toFile().deleteOnExit();
      runs.files.add(file);
      try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(file), 1 << 16))) {
        out.writeInt(buffer.size());
        for (T v : buffer) {
          codec.write(out, v);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(what + ": cannot write its spill file: " + e.getMessage(), e);
    }
    buffer.clear();
  }

  private void sortBuffer() {
    if (order != null) {
      buffer.sort(order); // stable: equal keys keep their order of appending
    }
  }

  /** Ends appending: the elements held in memory are put in order. Returns this list. */
  public SpilledList<T> seal() {
    if (!sealed) {
      sealed = true;
      sortBuffer();
    }
    return this;
  }

  @Override
  public int size() {
    return (int) Math.min(Integer.MAX_VALUE, size);
  }

  /** How many elements were written to files (0 when all are in memory). */
  long spilled() {
    return size - buffer.size();
  }

  @Override
  public ListIterator<T> listIterator(int index) {
    if (index < 0 || index > size) {
      throw new IndexOutOfBoundsException("index " + index + " of " + size);
    }
    seal();
    ListIterator<T> it = new Reader(sources());
    for (int i = 0; i < index; i++) {
      it.next();
    }
    return it;
  }

  /** One sorted (or appended) sequence: a run file, or the elements in memory. */
  private final class Source {
    final int rank;
    final DataInputStream in;
    int left;
    int next; // in memory: the next index
    T head;

    Source(int rank, DataInputStream in, int left) {
      this.rank = rank;
      this.in = in;
      this.left = left;
    }

    boolean advance() {
      if (left == 0) {
        close();
        head = null;
        return false;
      }
      left--;
      if (in == null) {
        head = buffer.get(next++);
        return true;
      }
      try {
        head = codec.read(in);
      } catch (IOException e) {
        throw new UncheckedIOException(what + ": cannot read its spill file: " + e.getMessage(), e);
      }
      return true;
    }

    void close() {
      if (in != null) {
        try {
          in.close();
        } catch (IOException ignored) {
          // read to the end already
        }
      }
    }
  }

  private List<Source> sources() {
    List<Source> out = new ArrayList<>();
    try {
      for (Path f : runs.files) {
        DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(f), 1 << 16));
        out.add(new Source(out.size(), in, in.readInt()));
      }
    } catch (IOException e) {
      out.forEach(Source::close);
      throw new UncheckedIOException(what + ": cannot read its spill file: " + e.getMessage(), e);
    }
    out.add(new Source(out.size(), null, buffer.size()));
    return out;
  }

  /**
   * Forward-only reading: the sources merged by the order, ties (and every element of a list
   * without an order) going to the earlier source, which holds the earlier appended elements; so
   * a list without an order reads its sources one after another.
   */
  private final class Reader implements ListIterator<T> {
    private final PriorityQueue<Source> heads;
    private long next;

    Reader(List<Source> sources) {
      heads = new PriorityQueue<>(Math.max(1, sources.size()), (a, b) -> {
        int c = order == null ? 0 : order.compare(a.head, b.head);
        return c != 0 ? c : Integer.compare(a.rank, b.rank);
      });
      for (Source s : sources) {
        if (s.advance()) {
          heads.add(s);
        }
      }
    }

    @Override
    public boolean hasNext() {
      return next < size;
    }

    @Override
    public T next() {
      if (next >= size) {
        throw new NoSuchElementException();
      }
      Source s = heads.poll();
      T value = s.head;
      if (s.advance()) {
        heads.add(s);
      }
      next++;
      return value;
    }

    @Override
    public int nextIndex() {
      return (int) Math.min(Integer.MAX_VALUE, next);
    }

    @Override
    public boolean hasPrevious() {
      throw new UnsupportedOperationException("a spilled list is read forward");
    }

    @Override
    public T previous() {
      throw new UnsupportedOperationException("a spilled list is read forward");
    }

    @Override
    public int previousIndex() {
      return nextIndex() - 1;
    }

    @Override
    public void remove() {
      throw new UnsupportedOperationException("a spilled list is read-only");
    }

    @Override
    public void set(T value) {
      throw new UnsupportedOperationException("a spilled list is read-only");
    }

    @Override
    public void add(T value) {
      throw new UnsupportedOperationException("a spilled list is read-only");
    }
  }

  // ------------------------------------------------------------------ codecs

  private static final Codec<RoutingDecision> DECISIONS = new Codec<>() {
    @Override
    public void write(DataOutputStream out, RoutingDecision d) throws IOException {
      out.writeBoolean(d.kind().equals("routing"));
      out.writeLong(d.requestId());
      out.writeLong(d.timeUs());
      out.writeBoolean(d.admitted());
      out.writeUTF(d.reason());
      out.writeInt(d.chosen());
      out.writeInt(d.candidates().size());
      for (RoutingDecision.Candidate c : d.candidates()) {
        out.writeInt(c.instance());
        out.writeDouble(c.score());
        out.writeLong(c.estimatedWaitUs());
      }
      out.writeInt(d.alternatives().size());
      for (int a : d.alternatives()) {
        out.writeInt(a);
      }
      out.writeLong(d.regretUs());
    }

    @Override
    public RoutingDecision read(DataInputStream in) throws IOException {
      String kind = in.readBoolean() ? "routing" : "admission";
      long id = in.readLong();
      long t = in.readLong();
      boolean admitted = in.readBoolean();
      String reason = in.readUTF();
      int chosen = in.readInt();
      int n = in.readInt();
      List<RoutingDecision.Candidate> candidates = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        candidates.add(new RoutingDecision.Candidate(in.readInt(), in.readDouble(), in.readLong()));
      }
      int k = in.readInt();
      List<Integer> alternatives = new ArrayList<>(k);
      for (int i = 0; i < k; i++) {
        alternatives.add(in.readInt());
      }
      return new RoutingDecision(kind, id, t, admitted, reason, chosen, candidates, alternatives, in.readLong());
    }
  };

  private static final RequestOutcome[] OUTCOMES = RequestOutcome.values();

  private static final Codec<RequestRecord> RECORDS = new Codec<>() {
    @Override
    public void write(DataOutputStream out, RequestRecord r) throws IOException {
      out.writeLong(r.id());
      out.writeInt(r.stage());
      out.writeLong(r.arrivalUs());
      out.writeInt(r.inputTokens());
      out.writeInt(r.outputTokens());
      out.writeByte(r.outcome().ordinal());
      out.writeLong(r.ttftUs());
      out.writeLong(r.e2eUs());
      out.writeLong(r.schedulingDelayUs());
      out.writeInt(r.preemptions());
      out.writeInt(r.cachedPromptTokens());
      out.writeBoolean(r.rejectReason() != null);
      if (r.rejectReason() != null) {
        out.writeUTF(r.rejectReason());
      }
      out.writeInt(r.instance());
      out.writeBoolean(r.sloClass() != null);
      if (r.sloClass() != null) {
        out.writeUTF(r.sloClass());
      }
    }

    @Override
    public RequestRecord read(DataInputStream in) throws IOException {
      long id = in.readLong();
      int stage = in.readInt();
      long arrival = in.readLong();
      int input = in.readInt();
      int output = in.readInt();
      RequestOutcome outcome = OUTCOMES[in.readByte()];
      long ttft = in.readLong();
      long e2e = in.readLong();
      long delay = in.readLong();
      int preemptions = in.readInt();
      int cached = in.readInt();
      String reason = in.readBoolean() ? in.readUTF() : null;
      int instance = in.readInt();
      String slo = in.readBoolean() ? in.readUTF() : null;
      return new RequestRecord(id, stage, arrival, input, output, outcome, ttft, e2e, delay, preemptions, cached,
          reason, instance, slo);
    }
  };
}
