package io.blis.engine.result;

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
import java.util.List;
import java.util.ListIterator;
import java.util.NoSuchElementException;

/**
 * The decisions of a decision trace, in the order taken, in bounded memory: the first {@link
 * #IN_MEMORY} are kept as objects; from there on they are written to a temporary file (a compact
 * binary form) and read back each time the list is iterated, so that a trace of millions of
 * decisions costs disk, not heap. The file is deleted when the list is no longer reachable, or
 * when the JVM exits. Iterate it (as the result writers do); {@code get(i)} walks from the start.
 * Read-only once the run has ended.
 */
public final class DecisionLog extends AbstractSequentialList<RoutingDecision> {

  /** Decisions held as objects before the log spills to a file. */
  public static final int IN_MEMORY = 100_000;

  private static final Cleaner CLEANER = Cleaner.create();

  private final int inMemoryLimit;
  private final List<RoutingDecision> head = new ArrayList<>();
  private long size;
  private Spill spill;

  /** An empty log that spills after {@link #IN_MEMORY} decisions. */
  public DecisionLog() {
    this(IN_MEMORY);
  }

  /** An empty log that spills after {@code inMemoryLimit} decisions (tests). */
  DecisionLog(int inMemoryLimit) {
    this.inMemoryLimit = inMemoryLimit;
  }

  /** The spill file and its stream; a cleaning action of its own, so that it holds no log. */
  private static final class Spill implements Runnable {
    final Path file;
    DataOutputStream out;

    Spill(Path file) throws IOException {
      this.file = file;
      this.out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(file), 1 << 16));
    }

    @Override
    public void run() {
      try {
        if (out != null) {
          out.close();
        }
        Files.deleteIfExists(file);
      } catch (IOException ignored) {
        // a temporary file the system cleans up eventually
      }
    }
  }

  /** Appends a decision. */
  public void append(RoutingDecision d) {
    size++;
    if (head.size() < inMemoryLimit) {
      head.add(d);
      return;
    }
    try {
      if (spill == null) {
        Path file = Files.createTempFile("blis-decisions-", ".bin");
        file.toFile().deleteOnExit();
        spill = new Spill(file);
        CLEANER.register(this, spill);
      }
      write(spill.out, d);
    } catch (IOException e) {
      throw new UncheckedIOException("decision trace: cannot write its spill file: " + e.getMessage(), e);
    }
  }

  @Override
  public int size() {
    return (int) Math.min(Integer.MAX_VALUE, size);
  }

  /** How many decisions were spilled to the file (0 when all are in memory). */
  long spilled() {
    return size - head.size();
  }

  @Override
  public ListIterator<RoutingDecision> listIterator(int index) {
    if (index < 0 || index > size) {
      throw new IndexOutOfBoundsException("index " + index + " of " + size);
    }
    DataInputStream in = null;
    if (spilled() > 0) {
      try {
        spill.out.flush();
        in = new DataInputStream(new BufferedInputStream(Files.newInputStream(spill.file), 1 << 16));
      } catch (IOException e) {
        throw new UncheckedIOException("decision trace: cannot read its spill file: " + e.getMessage(), e);
      }
    }
    ListIterator<RoutingDecision> it = new Reader(in);
    for (int i = 0; i < index; i++) {
      it.next();
    }
    return it;
  }

  /** Forward-only reading: the objects in memory, then the file. */
  private final class Reader implements ListIterator<RoutingDecision> {
    private final DataInputStream in;
    private long next;

    Reader(DataInputStream in) {
      this.in = in;
    }

    @Override
    public boolean hasNext() {
      boolean more = next < size;
      if (!more && in != null) {
        try {
          in.close();
        } catch (IOException ignored) {
          // read to the end already
        }
      }
      return more;
    }

    @Override
    public RoutingDecision next() {
      if (next >= size) {
        throw new NoSuchElementException();
      }
      RoutingDecision d;
      if (next < head.size()) {
        d = head.get((int) next);
      } else {
        try {
          d = read(in);
        } catch (IOException e) {
          throw new UncheckedIOException("decision trace: cannot read its spill file: " + e.getMessage(), e);
        }
      }
      next++;
      return d;
    }

    @Override
    public int nextIndex() {
      return (int) Math.min(Integer.MAX_VALUE, next);
    }

    @Override
    public boolean hasPrevious() {
      throw new UnsupportedOperationException("a decision log is read forward");
    }

    @Override
    public RoutingDecision previous() {
      throw new UnsupportedOperationException("a decision log is read forward");
    }

    @Override
    public int previousIndex() {
      return nextIndex() - 1;
    }

    @Override
    public void remove() {
      throw new UnsupportedOperationException("a decision log is read-only");
    }

    @Override
    public void set(RoutingDecision d) {
      throw new UnsupportedOperationException("a decision log is read-only");
    }

    @Override
    public void add(RoutingDecision d) {
      throw new UnsupportedOperationException("a decision log is read-only");
    }
  }

  private static void write(DataOutputStream out, RoutingDecision d) throws IOException {
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

  private static RoutingDecision read(DataInputStream in) throws IOException {
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
}
