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
 * <p>HTTP is Netty's (an optional dependency of blis-engine: an embedder who never starts a server
 * does not need it on the class path).
 */
public final class SimulatedServer implements AutoCloseable {

  /** The response header naming the request fields the simulation accepted but ignored. */
  static final String IGNORED_HEADER = "x-blis-ignored";
  private static final int MAX_BODY_BYTES = 64 * 1024 * 1024;

  private final ServeConfig config;
  private final RealTimeDriver driver;
  private final ServeMetrics metrics;
  private final EventLoopGroup boss;
  private final EventLoopGroup workers;
  private final Channel listening;
  private final long createdEpochS = System.currentTimeMillis() / 1000;
  private final Histogram latenessUs = new ConcurrentHistogram(3);
  private volatile boolean stopped;
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
    this.metrics = new ServeMetrics(config.servedModelNames().get(0), driver::snapshot);
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
              ch.pipeline().addLast(new HttpServerCodec(), new ArrivalStamp(), new HttpServerKeepAliveHandler(),
                  new HttpObjectAggregator(MAX_BODY_BYTES), new Handler());
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
   * Stops listening and ends the simulation; returns its result (requests still in flight count
   * as left over).
   */
  public SimulationResult stop() {
    stopped = true;
    try {
      listening.close().sync();
      return driver.stop();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while stopping", e);
    } finally {
      shutdownGroups();
    }
  }

  @Override
  public void close() {
    if (!stopped) {
      stop();
    }
  }

  private void shutdownGroups() {
    boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }

  /** The smallest max_model_len of the instances (0 when none is limited). */
  private int maxModelLen() {
    int min = 0;
    for (InstanceStatus s : driver.snapshot().instances()) {
      if (s.maxModelLen() > 0) {
        min = min == 0 ? s.maxModelLen() : Math.min(min, s.maxModelLen());
      }
    }
    return min;
  }

  // ------------------------------------------------------------------ HTTP

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

  /** One per connection; reads one request at a time (no pipelining). */
  private final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
    private volatile long current = -1;

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
            OpenAiProtocol.models(config.servedModelNames(), createdEpochS, maxModelLen()));
      } else if (path.equals("/v1/completions") || path.equals("/v1/chat/completions")) {
        if (!m.equals(HttpMethod.POST)) {
          error(ctx, keepAlive, 405, "use POST for " + path);
          return;
        }
        byte[] body = new byte[req.content().readableBytes()];
        req.content().getBytes(req.content().readerIndex(), body);
        generate(ctx, keepAlive, body, path.equals("/v1/chat/completions"));
      } else {
        error(ctx, keepAlive, 404, "no route " + m + " " + path
            + " (the simulated server has /v1/completions, /v1/chat/completions, /v1/models, /health, /metrics, /version)");
      }
    }

    private void generate(ChannelHandlerContext ctx, boolean keepAlive, byte[] body, boolean chat) {
      ServeRequest r;
      try {
        r = OpenAiProtocol.parse(body, chat);
      } catch (IllegalArgumentException e) {
        error(ctx, keepAlive, 400, e.getMessage());
        return;
      }
      String model = r.model().isEmpty() ? config.servedModelNames().get(0) : r.model();
      if (!config.servedModelNames().contains(model)) {
        error(ctx, keepAlive, 404, "The model `" + model + "` does not exist.");
        return;
      }
      int maxLen = maxModelLen();
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
          r.stream(), r.includeUsage(), r.ignored());
      ctx.channel().config().setAutoRead(false);
      Long arrived = ctx.channel().attr(ARRIVAL).get();
      long arrivalNanos = arrived != null ? arrived : System.nanoTime();
      Sink sink = new Sink(ctx, keepAlive, resolved, arrivalNanos);
      try {
        sink.id = driver.newId();
        current = sink.id;
        driver.submit(sink.id, resolved, sink, arrivalNanos);
      } catch (IllegalStateException stopping) {
        ctx.channel().config().setAutoRead(true);
        error(ctx, keepAlive, 503, stopping.getMessage());
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
      long id = current;
      if (id >= 0) {
        driver.abort(id);
      }
      super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }

    /** Writes one request's answer; called on the simulation thread, writes batched per loop. */
    private final class Sink implements ResponseSink {
      private final ChannelHandlerContext ctx;
      private final boolean keepAlive;
      private final ServeRequest request;
      private final long submitNanos;
      private final long created = System.currentTimeMillis() / 1000;
      long id;
      private OpenAiProtocol.ChunkFormat format;
      /** The metrics' label children of the instance serving the request (set by onEngine). */
      private volatile ServeMetrics.Engine m = metrics.engine(0);
      private boolean headersSent;
      private long previousDueNanos;

      Sink(ChannelHandlerContext ctx, boolean keepAlive, ServeRequest request, long submitNanos) {
        this.ctx = ctx;
        this.keepAlive = keepAlive;
        this.request = request;
        this.submitNanos = submitNanos;
      }

      @Override
      public void onEngine(int engine) {
        m = metrics.engine(engine);
      }

      @Override
      public void onStats(RequestStats stats) {
        if (RequestStats.ABORT.equals(stats.finishReason())) {
          metrics.observeFinished(m, stats); // its connection may be gone: no event loop pass
        } else {
          ServeMetrics.Engine e = m;
          batch(ctx, () -> metrics.observeFinished(e, stats));
        }
      }

      @Override
      public void onToken(int index, int total, long dueNanos) {
        if (request.stream() && !headersSent) {
          sendStreamHeaders();
        }
        // rendering, writing and the metrics run on the connection's event loop
        batch(ctx, () -> writeToken(index, total, dueNanos));
      }

      /** On the event loop: the token's chunk, its latency metrics and its lateness. */
      private void writeToken(int index, int total, long dueNanos) {
        ServeMetrics.Engine e = m;
        if (index == 1) {
          e.ttft.observe((dueNanos - submitNanos) / 1e9);
        } else {
          double itl = (dueNanos - previousDueNanos) / 1e9;
          e.itl.observe(itl);
          e.tpot.observe(itl);
        }
        previousDueNanos = dueNanos;
        if (!request.stream()) {
          return;
        }
        if (format == null) {
          format = new OpenAiProtocol.ChunkFormat(id, request.chat(), request.model(), created);
        }
        byte[] chunk = format.chunk(OpenAiProtocol.tokenText(id, index), index == 1,
            index == total ? "length" : null).getBytes(StandardCharsets.UTF_8);
        ctx.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(chunk))).addListener(f -> {
          long lateNanos = System.nanoTime() - dueNanos;
          latenessUs.recordValue(Math.max(0, lateNanos / 1000));
          e.lateness.observe(Math.max(0, lateNanos) / 1e9);
        });
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

      @Override
      public void onFinished(int promptTokens, int completionTokens) {
        current = -1;
        ServeMetrics.Engine e = m;
        batch(ctx, () -> e.e2e.observe((previousDueNanos - submitNanos) / 1e9));
        if (!request.stream()) {
          byte[] body = OpenAiProtocol.completion(id, request.chat(), request.model(), created,
              promptTokens, completionTokens).getBytes(StandardCharsets.UTF_8);
          batch(ctx, () -> respond(ctx, keepAlive, HttpResponseStatus.OK, "application/json", body, request));
          return;
        }
        if (!headersSent) {
          sendStreamHeaders();
        }
        StringBuilder tail = new StringBuilder();
        if (request.includeUsage()) {
          tail.append(OpenAiProtocol.usageChunk(id, request.chat(), request.model(), created,
              promptTokens, completionTokens));
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

      @Override
      public void onFailed(int httpStatus, String message) {
        current = -1;
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
