package io.blis.cli.serve;

import io.blis.engine.result.InstanceStatus;
import io.blis.engine.Simulation;
import io.blis.engine.result.SimulationResult;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerKeepAliveHandler;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * {@code blis serve}: an OpenAI-compatible HTTP server whose answers arrive when the simulation
 * says they would. Each request joins a {@link io.blis.engine.LiveSimulation} of the deployment at
 * the moment it arrives and its tokens stream at their simulated client times, in real time, while
 * the live requests share the simulated instances. Endpoints: {@code POST /v1/completions} and
 * {@code /v1/chat/completions} (streaming or not), {@code GET /v1/models}, {@code /health},
 * {@code /metrics} (vLLM's Prometheus names), {@code /version}. Prompt lengths without a tokenizer: see {@link
 * OpenAiProtocol}. The answer's text is synthetic; its token count, timing and {@code usage} are
 * the simulation's.
 *
 * <p>It holds clients to a production server's limits ({@link ServeConfig.Limits}: body 413,
 * request line 414, headers 431, malformed HTTP 400, request-read timeout 408, idle timeout,
 * connection cap 503) and shuts down gracefully ({@link #drain(Duration)}, {@link
 * #shutdown(Duration)}).
 *
 * <p>HTTP is Netty's (an optional dependency of blis-engine: an embedder who never starts a server
 * does not need it on the class path).
 */
public final class SimulatedServer implements AutoCloseable {

  /** The response header naming the request fields the simulation accepted but ignored. */
  static final String IGNORED_HEADER = "x-blis-ignored";

  private final ServeConfig config;
  /** The served model's vocabulary size (token ids in a prompt must be below it), or 0 if unknown. */
  private volatile int vocabSize;
  private final RealTimeDriver driver;
  private final ServeMetrics metrics;
  private final EventLoopGroup boss;
  private final EventLoopGroup workers;
  /**
   * Parses and checks the generation requests, off the I/O threads: an I/O thread then only reads
   * and decodes HTTP, so the requests of a burst are read, and their arrival stamped, as they come
   * rather than each after the parsing of those read before it.
   */
  private final java.util.concurrent.ExecutorService parser = java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "blis-serve-parse");
    t.setDaemon(true);
    return t;
  });
  private final Channel listening;
  private final long createdEpochS = System.currentTimeMillis() / 1000;
  private final Histogram latenessUs = new ConcurrentHistogram(3);
  private volatile boolean stopped;
  /** What {@link #stop()} returned (a second call returns it again). */
  private SimulationResult stoppedWith;
  /** Set when a graceful shutdown begins: no new connections, new requests answered 503. */
  private volatile boolean draining;
  private final java.util.concurrent.atomic.AtomicInteger openConnections = new java.util.concurrent.atomic.AtomicInteger();
  private final java.util.concurrent.atomic.AtomicLong refusedConnections = new java.util.concurrent.atomic.AtomicLong();
  /** Requests read whose answers are not all written yet, over every connection. */
  private final java.util.concurrent.atomic.AtomicInteger answersInFlight = new java.util.concurrent.atomic.AtomicInteger();
  /** Writes the sinks queued in one delivery pass, per event loop (simulation thread only). */
  private final java.util.Map<io.netty.channel.EventLoop, java.util.List<Runnable>> batches = new java.util.HashMap<>();
  private final java.util.Map<io.netty.channel.EventLoop, java.util.Set<ChannelHandlerContext>> touched = new java.util.HashMap<>();

  /** Queues {@code write} to run on {@code ctx}'s event loop at the end of the delivery pass. */
  private void batch(ChannelHandlerContext ctx, Runnable write) {
    io.netty.channel.EventLoop loop = ctx.channel().eventLoop();
    batches.computeIfAbsent(loop, l -> new java.util.ArrayList<>()).add(write);
    touched.computeIfAbsent(loop, l -> new java.util.LinkedHashSet<>()).add(ctx);
  }

  /**
   * Hands each event loop its queued writes as one task that writes them all and flushes each
   * connection once: one wake-up per loop per delivery pass instead of one per token.
   */
  private void flushBatches() {
    if (batches.isEmpty()) {
      return;
    }
    for (var e : batches.entrySet()) {
      java.util.List<Runnable> writes = e.getValue();
      java.util.Set<ChannelHandlerContext> contexts = touched.get(e.getKey());
      e.getKey().execute(() -> {
        for (Runnable w : writes) {
          w.run();
        }
        for (ChannelHandlerContext c : contexts) {
          c.flush();
        }
      });
    }
    batches.clear();
    touched.clear();
  }

  private SimulatedServer(Simulation.Builder simulation, ServeConfig config) throws InterruptedException {
    this.config = config;
    this.driver = new RealTimeDriver(simulation, this::flushBatches);
    driver.routeByModel(config.routeByModel());
    driver.loraModules(config.loraModules());
    String first = config.servedModelNames().get(0);
    java.util.List<String> engineModels = driver.servedModels();
    this.metrics = new ServeMetrics(first, i -> config.routeByModel() && i >= 0 && i < engineModels.size()
        && engineModels.get(i) != null ? engineModels.get(i) : first, driver::snapshot);
    // Linux's epoll transport where its native library loads (fewer system calls per write), else NIO
    boolean epoll = io.netty.channel.epoll.Epoll.isAvailable();
    io.netty.channel.IoHandlerFactory ioFactory = epoll ? io.netty.channel.epoll.EpollIoHandler.newFactory()
        : NioIoHandler.newFactory();
    this.boss = new MultiThreadIoEventLoopGroup(1, ioFactory);
    this.workers = new MultiThreadIoEventLoopGroup(config.ioThreads(), ioFactory);
    try {
      ServerBootstrap b = new ServerBootstrap().group(boss, workers)
          .channel(epoll ? io.netty.channel.epoll.EpollServerSocketChannel.class : NioServerSocketChannel.class)
          .option(ChannelOption.SO_BACKLOG, 1024)
          .childOption(ChannelOption.TCP_NODELAY, true)
          .childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
              if (openConnections.incrementAndGet() > config.limits().maxConnections() || draining) {
                openConnections.decrementAndGet();
                refusedConnections.incrementAndGet();
                refuse(ch);
                return;
              }
              ch.closeFuture().addListener(f -> openConnections.decrementAndGet());
              ServeConfig.Limits limits = config.limits();
              Connection connection = new Connection();
              ch.pipeline().addLast(connection.new RawActivity(),
                  new HttpServerCodec(new io.netty.handler.codec.http.HttpDecoderConfig()
                      .setMaxInitialLineLength(limits.maxRequestLineBytes())
                      .setMaxHeaderSize(limits.maxHeaderBytes())),
                  connection.new Guard(), new ArrivalStamp(), new HttpServerKeepAliveHandler(),
                  connection.new BodyAggregator(limits.maxBodyBytes()), new Handler());
            }
          });
      InetSocketAddress address = new InetSocketAddress(config.host(), config.port());
      if (address.isUnresolved()) {
        throw new IllegalArgumentException("--host: '" + config.host()
            + "' is not an address of this machine or a name that resolves to one");
      }
      this.listening = b.bind(address).sync().channel();
    } catch (Exception e) { // sync() rethrows a bind failure's checked exception undeclared
      shutdownGroups();
      driver.close();
      if (e instanceof InterruptedException ie) {
        throw ie;
      }
      if (e instanceof java.io.IOException || e instanceof io.netty.channel.ChannelException) {
        throw new IllegalArgumentException("--host/--port: cannot listen on " + config.host() + ":"
            + config.port() + ": " + e.getMessage(), e);
      }
      throw e instanceof RuntimeException re ? re : new IllegalStateException(e);
    }
  }

  /**
   * Starts a server for the deployment {@code simulation} describes (instances, latency models,
   * limits, policies; no request source).
   *
   * @throws IllegalArgumentException if the address cannot be bound
   */
  public static SimulatedServer start(Simulation.Builder simulation, ServeConfig config) {
    try {
      return new SimulatedServer(simulation, config);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while binding", e);
    }
  }

  /**
   * As {@link #start(Simulation.Builder, ServeConfig)}; prompts given as token ids must then lie
   * in {@code [0, vocabSize)}, as vLLM checks them (400 otherwise).
   *
   * @param vocabSize the served model's vocabulary size ({@code vocab_size}), 0 for no check
   */
  public static SimulatedServer start(Simulation.Builder simulation, ServeConfig config, int vocabSize) {
    SimulatedServer s = start(simulation, config);
    s.vocabSize = vocabSize;
    return s;
  }

  /** How long the simulation was held back behind the wall clock so far, us (see RealTimeDriver). */
  public long heldBackUs() {
    return driver.heldBackUs();
  }

  /** The port it listens on (the bound one when the config asked for 0). */
  public int port() {
    return ((InetSocketAddress) listening.localAddress()).getPort();
  }

  /** The OpenAI base URL, {@code http://HOST:PORT/v1}. */
  public String baseUrl() {
    String host = config.host().equals("0.0.0.0") ? "127.0.0.1" : config.host();
    return "http://" + host + ":" + port() + "/v1";
  }

  /**
   * How late streamed tokens were written to their connections against their simulated times,
   * microseconds (a copy; negative lateness, which cannot happen, would be recorded as 0).
   */
  public Histogram deliveryLatenessUs() {
    return latenessUs.copy();
  }

  /**
   * How late the simulation thread handed tokens to their connections' writers, microseconds (a
   * copy): the part of {@link #deliveryLatenessUs()} that is not the writers' own.
   */
  public Histogram dispatchLatenessUs() {
    return driver.dispatchLatenessUs.copy();
  }

  /** What the simulated instances hold now (at most 100 ms old). */
  public java.util.List<InstanceStatus> status() {
    return driver.snapshot().instances();
  }

  /**
   * Stops listening and ends the simulation at once; returns its result (requests still in flight
   * count as left over). A second call returns the same result.
   */
  public synchronized SimulationResult stop() {
    if (stopped) {
      return stoppedWith;
    }
    stopped = true;
    draining = true;
    try {
      listening.close().sync();
      stoppedWith = driver.stop();
      return stoppedWith;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while stopping", e);
    } finally {
      shutdownGroups();
    }
  }

  /**
   * Shuts down gracefully, as uvicorn does on SIGTERM: {@link #drain(Duration)}, then {@link
   * #stop()}.
   *
   * @return the simulation's result (answers cut off by the timeout count as left over)
   */
  public SimulationResult shutdown(Duration timeout) {
    drain(timeout);
    return stop();
  }

  /**
   * Begins a graceful shutdown and waits for its answers in progress: stops accepting connections
   * (a new one is refused), answers a new request on an open connection 503 and closes it, closes
   * each connection once its answer is written, and returns when no answer is in progress or
   * {@code timeout} has passed. The simulation goes on (for the answers); {@link #stop()} ends it.
   *
   * @return whether every answer in progress was written in time
   */
  public boolean drain(Duration timeout) {
    draining = true;
    if (stopped) {
      return answersInFlight.get() == 0;
    }
    try {
      listening.close().sync();
      long deadline = System.nanoTime() + timeout.toNanos();
      while (answersInFlight.get() > 0 && System.nanoTime() - deadline < 0) {
        Thread.sleep(Math.max(1, Math.min(20, (deadline - System.nanoTime()) / 1_000_000)));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return answersInFlight.get() == 0;
  }

  /** Requests read whose answers are not all written yet, over every connection. */
  public int answersInFlight() {
    return answersInFlight.get();
  }

  /** Connections open now. */
  public int openConnections() {
    return openConnections.get();
  }

  /**
   * Connections refused since the start: over {@code --max-connections}, or accepted while a
   * shutdown began.
   */
  public long refusedConnections() {
    return refusedConnections.get();
  }

  /** A graceful {@link #shutdown(Duration)} with the config's shutdown timeout. */
  @Override
  public void close() {
    if (!stopped) {
      shutdown(config.limits().shutdownTimeout());
    }
  }

  private void shutdownGroups() {
    parser.shutdownNow();
    boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }

  /** The smallest max_model_len of the instances (0 when none is limited). */
  /**
   * The context limit requests of {@code model} meet: the smallest of the instances serving it
   * (every instance's when the fleet does not route by model); 0 for none.
   */
  private int maxModelLen(String model) {
    int min = 0;
    java.util.List<String> served = driver.servedModels();
    for (InstanceStatus s : driver.snapshot().instances()) {
      boolean serves = !config.routeByModel() || s.index() >= served.size() || model.equals(served.get(s.index()));
      if (serves && s.maxModelLen() > 0) {
        min = min == 0 ? s.maxModelLen() : Math.min(min, s.maxModelLen());
      }
    }
    return min;
  }

  // ------------------------------------------------------------------ HTTP

  private static final long[] NONE = new long[0];

  /** When the head of the request being read reached the server ({@link System#nanoTime()}). */
  private static final io.netty.util.AttributeKey<Long> ARRIVAL = io.netty.util.AttributeKey.valueOf("blis.arrival");

  /**
   * Notes when each request's head was decoded: the request's arrival, as vLLM's front end would
   * see it, before its body is read and parsed.
   */
  private static final class ArrivalStamp extends io.netty.channel.ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof io.netty.handler.codec.http.HttpRequest) {
        ctx.channel().attr(ARRIVAL).set(System.nanoTime());
      }
      ctx.fireChannelRead(msg);
    }
  }

  /**
   * Answers a connection over {@code --max-connections} 503 and closes it, before reading
   * anything.
   */
  private static void refuse(SocketChannel ch) {
    byte[] body = OpenAiProtocol.error(503, "too many connections (--max-connections); try again later")
        .getBytes(StandardCharsets.UTF_8);
    byte[] head = ("HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: "
        + body.length + "\r\nconnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    ch.pipeline().addLast(new io.netty.channel.ChannelInboundHandlerAdapter() {
      @Override
      public void channelActive(ChannelHandlerContext ctx) {
        ctx.writeAndFlush(Unpooled.wrappedBuffer(head, body)).addListener(ChannelFutureListener.CLOSE);
      }

      @Override
      public void channelRead(ChannelHandlerContext ctx, Object msg) {
        io.netty.util.ReferenceCountUtil.release(msg);
      }

      @Override
      public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
      }
    });
  }

  /**
   * One connection's part in the limits: whether a request is being read, how many answers are in
   * progress, and the one timer that fits (the request-read timeout while a request is read, the
   * idle timeout while nothing happens, none while an answer is written). Event loop only.
   */
  private final class Connection {
    /** Bytes of a request arrived, and not all of it has been decoded yet. */
    private boolean reading;
    /** Requests read whose answers are not all written yet. */
    private int inFlight;
    /** The head of a request was read and accepted, its body not all yet (counted in answersInFlight). */
    private boolean headRead;
    /** Answered with an error and closing: what still arrives is dropped. */
    private boolean rejected;
    /** Whether any byte arrived on the connection yet (its first bytes are checked for TLS). */
    private boolean anyByte;
    private io.netty.util.concurrent.Future<?> timer;
    private ChannelHandlerContext guard;

    private void cancelTimer() {
      if (timer != null) {
        timer.cancel(false);
        timer = null;
      }
    }

    /** Arms the timer the state calls for (none while an answer is in progress). */
    private void arm() {
      cancelTimer();
      if (rejected || inFlight > 0 || guard == null || !guard.channel().isActive()) {
        return;
      }
      boolean forRead = reading;
      Duration d = forRead ? config.limits().requestReadTimeout() : config.limits().idleTimeout();
      if (d.isZero()) {
        return;
      }
      timer = guard.executor().schedule(() -> expire(forRead), d.toNanos(), TimeUnit.NANOSECONDS);
    }

    private void expire(boolean forRead) {
      timer = null;
      if (rejected || inFlight > 0 || reading != forRead) {
        return;
      }
      if (forRead) {
        reject(408, "the request was not received within " + seconds(config.limits().requestReadTimeout())
            + " s (--request-read-timeout-s)");
      } else {
        guard.close();
      }
    }

    /**
     * Answers {@code status} with the server's JSON error, then closes: after the answer is written
     * the output is shut, what the client still sends is read and dropped, and the connection
     * closes when the client closes its side or 2 s later (so that unread bytes do not turn the
     * close into a reset that could destroy the answer before the client reads it).
     */
    private void reject(int status, String message) {
      if (rejected) {
        return;
      }
      rejected = true;
      reading = false;
      cancelTimer();
      ChannelHandlerContext ctx = guard;
      FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(status),
          Unpooled.wrappedBuffer(OpenAiProtocol.error(status, message).getBytes(StandardCharsets.UTF_8)));
      res.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json");
      HttpUtil.setContentLength(res, res.content().readableBytes());
      HttpUtil.setKeepAlive(res, false);
      ctx.channel().config().setAutoRead(true);
      ctx.writeAndFlush(res).addListener(f -> {
        if (f.isSuccess() && ctx.channel() instanceof SocketChannel socket && socket.isActive()) {
          socket.shutdownOutput();
          ctx.executor().schedule(() -> {
            ctx.close();
          }, 2, TimeUnit.SECONDS);
        } else {
          ctx.close();
        }
      });
    }

    /** Before the codec: notes the first byte of each request (the request-read timeout starts). */
    final class RawActivity extends io.netty.channel.ChannelInboundHandlerAdapter {
      @Override
      public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (rejected) {
          io.netty.util.ReferenceCountUtil.release(msg);
          return;
        }
        if (!anyByte && msg instanceof io.netty.buffer.ByteBuf b && b.isReadable()) {
          anyByte = true;
          if (tlsHandshake(b)) {
            // a TLS client (https:// to this port) waits for the server's hello and sends no line
            // end: answered at once rather than after the request-read timeout
            io.netty.util.ReferenceCountUtil.release(msg);
            reject(400, "this server speaks plain HTTP, not TLS: use http://, not https://");
            return;
          }
        }
        if (!reading) {
          reading = true;
          arm();
        }
        ctx.fireChannelRead(msg);
      }
    }

    /**
     * After the codec: turns decoder failures into 400, 414 and 431, refuses a body declared over
     * the limit (413) and requests while the server shuts down (503), counts the answers in
     * progress, and closes a connection whose answer ends while the server shuts down.
     */
    final class Guard extends io.netty.channel.ChannelDuplexHandler {
      @Override
      public void handlerAdded(ChannelHandlerContext ctx) {
        guard = ctx;
        if (ctx.channel().isActive()) {
          arm();
        }
      }

      @Override
      public void channelActive(ChannelHandlerContext ctx) throws Exception {
        arm();
        super.channelActive(ctx);
      }

      @Override
      public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (rejected) {
          io.netty.util.ReferenceCountUtil.release(msg);
          return;
        }
        if (msg instanceof io.netty.handler.codec.http.HttpObject o && o.decoderResult().isFailure()) {
          io.netty.util.ReferenceCountUtil.release(msg);
          // the decoder's stand-in for a request whose request line it could not read
          boolean requestLine = o instanceof io.netty.handler.codec.http.FullHttpRequest r
              && "/bad-request".equals(r.uri());
          decoderFailure(o instanceof io.netty.handler.codec.http.HttpRequest, requestLine, o.decoderResult().cause());
          return;
        }
        if (msg instanceof io.netty.handler.codec.http.HttpRequest req) {
          String refusal = refusal(req);
          if (refusal != null) {
            io.netty.util.ReferenceCountUtil.release(msg);
            reject(refusal.startsWith("413") ? 413 : refusal.startsWith("503") ? 503 : 400, refusal.substring(4));
            return;
          }
          // accepted: an answer in progress from its head on, so that a shutdown beginning while
          // its body arrives waits for it
          headRead = true;
          answersInFlight.incrementAndGet();
        }
        if (msg instanceof LastHttpContent) {
          reading = false;
          if (headRead) {
            headRead = false;
            inFlight++;
          }
          cancelTimer();
        }
        ctx.fireChannelRead(msg);
      }

      private void decoderFailure(boolean head, boolean requestLine, Throwable cause) {
        ServeConfig.Limits limits = config.limits();
        if (head && cause instanceof io.netty.handler.codec.http.TooLongHttpLineException) {
          reject(414, "the request line is longer than " + limits.maxRequestLineBytes()
              + " bytes (--max-request-line-bytes)");
        } else if (cause instanceof io.netty.handler.codec.http.TooLongHttpHeaderException) {
          reject(431, "the request headers are larger than " + limits.maxHeaderBytes() + " bytes (--max-header-bytes)");
        } else if (requestLine) {
          // the decoder's reason ("text is empty (possibly HTTP/0.9)") is its own, not the client's
          reject(400, "malformed HTTP request: malformed request line; expected METHOD PATH HTTP/1.x, such as"
              + " GET /health HTTP/1.1");
        } else {
          String why = cause == null || cause.getMessage() == null ? String.valueOf(cause) : cause.getMessage();
          reject(400, "malformed HTTP request: " + oneLine(why));
        }
      }

      /** Why {@code req} is refused, as "STATUS reason", or null. */
      private String refusal(io.netty.handler.codec.http.HttpRequest req) {
        HttpVersion v = req.protocolVersion();
        if (!v.protocolName().equals("HTTP") || v.majorVersion() != 1 || v.minorVersion() > 1) {
          return "400 malformed HTTP request: unsupported HTTP version " + oneLine(v.text());
        }
        String uri = req.uri();
        if (!uri.startsWith("/") && !uri.equals("*") && !uri.startsWith("http://") && !uri.startsWith("https://")) {
          return "400 malformed HTTP request: the request target '" + oneLine(uri) + "' is not a path";
        }
        if (draining) {
          return "503 the server is shutting down";
        }
        long declared;
        try {
          declared = HttpUtil.getContentLength(req, -1L);
        } catch (NumberFormatException e) {
          return "400 malformed HTTP request: bad content-length";
        }
        if (declared > config.limits().maxBodyBytes()) {
          return "413 the request body is larger than " + config.limits().maxBodyBytes() + " bytes (--max-body-bytes)";
        }
        return null;
      }

      @Override
      public void write(ChannelHandlerContext ctx, Object msg, io.netty.channel.ChannelPromise promise) throws Exception {
        boolean informational = msg instanceof HttpResponse r
            && r.status().codeClass() == io.netty.handler.codec.http.HttpStatusClass.INFORMATIONAL;
        if (msg instanceof HttpResponse r && !informational && draining) {
          HttpUtil.setKeepAlive(r, false);
        }
        if (msg instanceof LastHttpContent && !informational) {
          promise = promise.unvoid();
          promise.addListener(f -> answered(ctx));
        }
        ctx.write(msg, promise);
      }

      private void answered(ChannelHandlerContext ctx) {
        if (inFlight > 0) {
          inFlight--;
          answersInFlight.decrementAndGet();
        }
        if (inFlight == 0 && draining) {
          ctx.close();
          return;
        }
        arm();
      }

      @Override
      public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        cancelTimer();
        answersInFlight.addAndGet(-inFlight - (headRead ? 1 : 0));
        inFlight = 0;
        headRead = false;
        super.channelInactive(ctx);
      }
    }

    /** The aggregator, answering a body over the limit (one not declared, chunked) 413. */
    final class BodyAggregator extends HttpObjectAggregator {
      BodyAggregator(int maxBytes) {
        super(maxBytes);
      }

      @Override
      protected void handleOversizedMessage(ChannelHandlerContext ctx, io.netty.handler.codec.http.HttpMessage oversized) {
        reject(413, "the request body is larger than " + config.limits().maxBodyBytes() + " bytes (--max-body-bytes)");
      }
    }
  }

  private static String seconds(Duration d) {
    return java.math.BigDecimal.valueOf(d.toNanos(), 9).stripTrailingZeros().toPlainString();
  }

  /**
   * Whether {@code b} starts as a TLS record of the handshake: content type 22 (0x16), then a
   * protocol version whose major byte is 3 (SSL 3.0 to TLS 1.3), which no HTTP request line does.
   */
  static boolean tlsHandshake(io.netty.buffer.ByteBuf b) {
    int at = b.readerIndex();
    return b.getUnsignedByte(at) == 0x16 && (b.readableBytes() < 2 || b.getUnsignedByte(at + 1) == 0x03);
  }

  /** {@code s} with control characters as spaces, at most 200 characters. */
  private static String oneLine(String s) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < s.length() && b.length() < 200; i++) {
      char c = s.charAt(i);
      b.append(Character.isISOControl(c) ? ' ' : c);
    }
    return b.toString().strip();
  }

  /** One per connection; reads one request at a time (no pipelining). */
  private final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
    /** The simulated requests of the answer in progress on this connection (none: empty). */
    private volatile long[] current = NONE;

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
      String path = req.uri();
      int q = path.indexOf('?');
      if (q >= 0) {
        path = path.substring(0, q);
      }
      boolean keepAlive = HttpUtil.isKeepAlive(req);
      HttpMethod m = req.method();
      if (m.equals(HttpMethod.GET) && path.equals("/health")) {
        respond(ctx, keepAlive, HttpResponseStatus.OK, "text/plain", new byte[0]);
      } else if (m.equals(HttpMethod.GET) && path.equals("/metrics")) {
        respond(ctx, keepAlive, HttpResponseStatus.OK, metrics.contentType(), metrics.scrape());
      } else if (m.equals(HttpMethod.GET) && path.equals("/version")) {
        json(ctx, keepAlive, HttpResponseStatus.OK, OpenAiProtocol.version());
      } else if (m.equals(HttpMethod.GET) && path.equals("/v1/models")) {
        json(ctx, keepAlive, HttpResponseStatus.OK,
            OpenAiProtocol.models(config.servedModelNames(), config.loraModules(), createdEpochS,
                SimulatedServer.this::maxModelLen));
      } else if (path.equals("/v1/completions") || path.equals("/v1/chat/completions")) {
        if (!m.equals(HttpMethod.POST)) {
          error(ctx, keepAlive, 405, "use POST for " + path);
          return;
        }
        byte[] body = new byte[req.content().readableBytes()];
        req.content().getBytes(req.content().readerIndex(), body);
        boolean chat = path.equals("/v1/chat/completions");
        // one request at a time per connection: nothing more is read until this one is answered
        ctx.channel().config().setAutoRead(false);
        Long arrived = ctx.channel().attr(ARRIVAL).get();
        long arrivalNanos = arrived != null ? arrived : System.nanoTime();
        try {
          parser.execute(() -> generate(ctx, keepAlive, body, chat, arrivalNanos));
        } catch (java.util.concurrent.RejectedExecutionException stopping) {
          error(ctx, keepAlive, 503, "the server is shutting down");
        }
      } else {
        error(ctx, keepAlive, 404, "no route " + m + " " + path
            + " (the simulated server has /v1/completions, /v1/chat/completions, /v1/models, /health, /metrics, /version)");
      }
    }

    /**
     * Parses, checks and submits a generation request that reached the server at {@code
     * arrivalNanos}; on the parser thread.
     */
    private void generate(ChannelHandlerContext ctx, boolean keepAlive, byte[] body, boolean chat, long arrivalNanos) {
      ServeRequest r;
      try {
        r = OpenAiProtocol.parse(body, chat, vocabSize);
      } catch (IllegalArgumentException e) {
        error(ctx, keepAlive, 400, e.getMessage());
        return;
      }
      String model = r.model().isEmpty() ? config.servedModelNames().get(0) : r.model();
      if (!config.servedModelNames().contains(model) && !config.loraModules().contains(model)) {
        error(ctx, keepAlive, 404, "The model `" + model + "` does not exist.");
        return;
      }
      int maxLen = maxModelLen(model);
      int prompt = r.promptTokens().length;
      int maxTokens = r.maxTokens();
      if (maxLen > 0 && prompt >= maxLen) {
        error(ctx, keepAlive, 400, "This model's maximum context length is " + maxLen
            + " tokens. However, your request has " + prompt + " input tokens.");
        return;
      }
      if (maxTokens < 0) {
        maxTokens = maxLen > 0 ? maxLen - prompt : 16;
      } else if (maxLen > 0 && (long) prompt + maxTokens > maxLen) {
        error(ctx, keepAlive, 400, "This model's maximum context length is " + maxLen
            + " tokens. However, you requested " + ((long) prompt + maxTokens) + " tokens (" + prompt
            + " in the messages, " + maxTokens + " in the completion). Please reduce the length of"
            + " the messages or completion.");
        return;
      }
      ServeRequest resolved = new ServeRequest(r.chat(), model, r.promptTokens(), maxTokens,
          r.stream(), r.includeUsage(), r.ignored(), r.n());
      Answer answer = new Answer(ctx, keepAlive, resolved, arrivalNanos);
      try {
        long[] ids = new long[resolved.n()];
        for (int k = 0; k < ids.length; k++) {
          ids[k] = driver.newId();
          answer.choices[k].id = ids[k];
        }
        current = ids;
        // the sequences of parallel sampling arrive together, each a request of its own
        for (Sink choice : answer.choices) {
          driver.submit(choice.id, resolved, choice, arrivalNanos);
        }
        if (!ctx.channel().isActive()) {
          abortAll(ids); // the client left while the request was parsed
        }
      } catch (IllegalStateException stopping) {
        ctx.channel().config().setAutoRead(true);
        error(ctx, keepAlive, 503, stopping.getMessage());
      }
    }

    private void abortAll(long[] ids) {
      for (long id : ids) {
        driver.abort(id);
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
      abortAll(current);
      super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }

    /**
     * One client request's answer: its {@code n} choices, each a simulated request with its own
     * {@link Sink}. Called on the simulation thread; writes batched per loop.
     */
    private final class Answer {
      private final ChannelHandlerContext ctx;
      private final boolean keepAlive;
      private final ServeRequest request;
      private final long submitNanos;
      private final long created = System.currentTimeMillis() / 1000;
      final Sink[] choices;
      private boolean headersSent;
      private int unfinished;
      private boolean failed;

      Answer(ChannelHandlerContext ctx, boolean keepAlive, ServeRequest request, long submitNanos) {
        this.ctx = ctx;
        this.keepAlive = keepAlive;
        this.request = request;
        this.submitNanos = submitNanos;
        this.choices = new Sink[request.n()];
        for (int k = 0; k < choices.length; k++) {
          choices[k] = new Sink(this, k);
        }
        this.unfinished = choices.length;
      }

      /** The answer's id: its first choice's simulated request. */
      long id() {
        return choices[0].id;
      }

      private void sendStreamHeaders() {
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        head.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream; charset=utf-8");
        ignoredHeader(head, request);
        head.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-cache");
        HttpUtil.setTransferEncodingChunked(head, true);
        HttpUtil.setKeepAlive(head, keepAlive);
        batch(ctx, () -> ctx.write(head));
        headersSent = true;
      }

      /** Every choice delivered its last token: the end of the answer. */
      private void finish(int promptTokens) {
        current = NONE;
        long[] ids = new long[choices.length];
        int[] completions = new int[choices.length];
        int total = 0;
        for (int k = 0; k < choices.length; k++) {
          ids[k] = choices[k].id;
          completions[k] = choices[k].completionTokens;
          total += completions[k];
        }
        if (!request.stream()) {
          byte[] body = OpenAiProtocol.completion(id(), ids, completions, request.chat(), request.model(), created,
              promptTokens).getBytes(StandardCharsets.UTF_8);
          batch(ctx, () -> respond(ctx, keepAlive, HttpResponseStatus.OK, "application/json", body, request));
          return;
        }
        if (!headersSent) {
          sendStreamHeaders();
        }
        StringBuilder tail = new StringBuilder();
        if (request.includeUsage()) {
          tail.append(OpenAiProtocol.usageChunk(id(), request.chat(), request.model(), created, promptTokens, total));
        }
        tail.append(OpenAiProtocol.DONE);
        byte[] bytes = tail.toString().getBytes(StandardCharsets.UTF_8);
        batch(ctx, () -> {
          ctx.write(new DefaultHttpContent(Unpooled.wrappedBuffer(bytes)));
          var done = ctx.write(LastHttpContent.EMPTY_LAST_CONTENT);
          if (!keepAlive) {
            done.addListener(ChannelFutureListener.CLOSE);
          } else {
            done.addListener(f -> ctx.channel().config().setAutoRead(true));
          }
        });
      }

      /** A choice failed before its first token: the whole answer fails, the other choices abort. */
      private void fail(Sink failing, int httpStatus, String message) {
        if (failed) {
          return;
        }
        failed = true;
        current = NONE;
        for (Sink other : choices) {
          if (other != failing && !other.finished) {
            driver.abort(other.id);
          }
        }
        if (!headersSent) {
          batch(ctx, () -> error(ctx, keepAlive, httpStatus, message));
        } else {
          byte[] bytes = ("data: " + OpenAiProtocol.error(httpStatus, message) + "\n\n").getBytes(StandardCharsets.UTF_8);
          batch(ctx, () -> {
            ctx.write(new DefaultHttpContent(Unpooled.wrappedBuffer(bytes)));
            ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT).addListener(ChannelFutureListener.CLOSE);
          });
        }
        flushBatches(); // failures come outside a delivery pass
      }
    }

    /** One choice of an {@link Answer}: the sink of its simulated request. */
    private final class Sink implements ResponseSink {
      private final Answer answer;
      private final int choice;
      long id;
      private OpenAiProtocol.ChunkFormat format;
      /** The metrics' label children of the instance serving the request (set by onEngine). */
      private volatile ServeMetrics.Engine m = metrics.engine(0);
      private long previousDueNanos;
      /** When the previous token was delivered (written, or due when nothing is written per token). */
      private long previousTokenNanos;
      private int completionTokens;
      private boolean finished;

      Sink(Answer answer, int choice) {
        this.answer = answer;
        this.choice = choice;
      }

      @Override
      public void onEngine(int engine) {
        m = metrics.engine(engine);
      }

      @Override
      public void onStats(RequestStats stats) {
        int nParam = choice == 0 ? answer.request.n() : 0;
        if (RequestStats.ABORT.equals(stats.finishReason())) {
          metrics.observeFinished(m, stats, nParam); // its connection may be gone: no event loop pass
        } else {
          ServeMetrics.Engine e = m;
          batch(answer.ctx, () -> metrics.observeFinished(e, stats, nParam));
        }
      }

      @Override
      public void onToken(int index, int total, long dueNanos) {
        if (answer.failed) {
          return;
        }
        if (answer.request.stream() && !answer.headersSent) {
          answer.sendStreamHeaders();
        }
        // rendering, writing and the metrics run on the connection's event loop
        batch(answer.ctx, () -> writeToken(index, total, dueNanos));
      }

      /** On the event loop: the token's chunk, its latency metrics and its lateness. */
      private void writeToken(int index, int total, long dueNanos) {
        ServeMetrics.Engine e = m;
        previousDueNanos = dueNanos;
        if (!answer.request.stream()) {
          // nothing is written per token: the latencies of the simulated times
          observeToken(e, index, dueNanos);
          return;
        }
        if (format == null) {
          format = new OpenAiProtocol.ChunkFormat(answer.id(), choice, answer.request.chat(), answer.request.model(),
              answer.created);
        }
        byte[] chunk = format.chunk(OpenAiProtocol.tokenText(id, index), index == 1,
            index == total ? "length" : null).getBytes(StandardCharsets.UTF_8);
        ChannelHandlerContext ctx = answer.ctx;
        ctx.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(chunk))).addListener(f -> {
          long written = System.nanoTime();
          long lateNanos = written - dueNanos;
          latenessUs.recordValue(Math.max(0, lateNanos / 1000));
          e.lateness.observe(Math.max(0, lateNanos) / 1e9);
          // a streamed token's latencies are those of its write, as its client sees them (a write
          // the I/O thread made late counts in them)
          observeToken(e, index, written);
        });
      }

      /** TTFT (token 1) or the inter-token time of token {@code index}, delivered at {@code atNanos}. */
      private void observeToken(ServeMetrics.Engine e, int index, long atNanos) {
        if (index == 1) {
          e.ttft.observe((atNanos - answer.submitNanos) / 1e9);
        } else {
          double itl = (atNanos - previousTokenNanos) / 1e9;
          e.itl.observe(itl);
          e.tpot.observe(itl);
        }
        previousTokenNanos = atNanos;
      }

      @Override
      public void onFinished(int promptTokens, int completionTokens) {
        if (answer.failed || finished) {
          return;
        }
        finished = true;
        this.completionTokens = completionTokens;
        ServeMetrics.Engine e = m;
        // E2E ends with the last token's delivery (its write when streamed, as for TTFT and ITL)
        batch(answer.ctx, () -> e.e2e.observe(((answer.request.stream() ? previousTokenNanos : previousDueNanos)
            - answer.submitNanos) / 1e9));
        if (--answer.unfinished == 0) {
          answer.finish(promptTokens);
        }
      }

      @Override
      public void onFailed(int httpStatus, String message) {
        answer.fail(this, httpStatus, message);
      }
    }
  }

  private static void error(ChannelHandlerContext ctx, boolean keepAlive, int status, String message) {
    respond(ctx, keepAlive, HttpResponseStatus.valueOf(status), "application/json",
        OpenAiProtocol.error(status, message).getBytes(StandardCharsets.UTF_8));
  }

  private static void json(ChannelHandlerContext ctx, boolean keepAlive, HttpResponseStatus status, String body) {
    respond(ctx, keepAlive, status, "application/json", body.getBytes(StandardCharsets.UTF_8));
  }

  private static void respond(ChannelHandlerContext ctx, boolean keepAlive, HttpResponseStatus status,
      String contentType, byte[] body) {
    respond(ctx, keepAlive, status, contentType, body, null);
  }

  /** As above; with {@code request} (or null), its ignored fields in a header. */
  private static void respond(ChannelHandlerContext ctx, boolean keepAlive, HttpResponseStatus status,
      String contentType, byte[] body, ServeRequest request) {
    FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
        Unpooled.wrappedBuffer(body));
    res.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
    ignoredHeader(res, request);
    HttpUtil.setContentLength(res, body.length);
    HttpUtil.setKeepAlive(res, keepAlive);
    var f = ctx.writeAndFlush(res);
    if (!keepAlive) {
      f.addListener(ChannelFutureListener.CLOSE);
    } else {
      f.addListener(x -> ctx.channel().config().setAutoRead(true));
    }
  }

  /**
   * Names the request's fields that were accepted but have no effect in a simulation (sampling
   * parameters, stop strings, tools, unknown fields), so that a client can see them: header
   * {@value #IGNORED_HEADER}, absent when there are none.
   */
  private static void ignoredHeader(HttpResponse res, ServeRequest request) {
    if (request != null && !request.ignored().isEmpty()) {
      res.headers().set(IGNORED_HEADER, String.join(",", request.ignored()));
    }
  }
}
