package io.blis.cli.observe;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.util.ReferenceCountUtil;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;

/**
 * The HTTP/1.1 client of {@link Observer}, on Netty (an optional dependency of blis-engine, as
 * for {@code blis serve}): keep-alive connections pooled per server, each request written whole
 * in one flush, and each answer handed over line by line (server-sent events are lines) on the
 * I/O thread as its bytes arrive, so that a token's timestamp is the moment it was read. {@code
 * https} endpoints go through TLS with the JDK's trust store.
 */
final class NettyClient implements AutoCloseable {

  /** Receives one answer. Called on the I/O thread; must not block. */
  interface Lines {
    /**
     * The request was written: its bytes are with the operating system (on the I/O thread, before
     * anything of the answer can be read).
     */
    default void onWritten() {}

    /** The status line arrived. */
    void onStatus(int status);

    /** A line of the body (without its line break). */
    void onLine(String line);

    /** The body ended as the protocol says it should. */
    void onEnd();

    /**
     * The exchange failed: no connection, or the connection broke ({@code answered}: after the
     * status line arrived).
     */
    void onFailure(Throwable cause, boolean answered);

    /**
     * The most bytes of body this answer may have; past it the exchange fails with {@link
     * TooLarge} and its connection is closed.
     */
    default long maxBodyBytes() {
      return Long.MAX_VALUE;
    }
  }

  /** A server's answer (or a line of it) larger than the client reads. */
  static final class TooLarge extends IOException {
    TooLarge(String message) {
      super(message);
    }
  }

  /**
   * Interim (1xx) responses skipped before an answer at most; past it the exchange fails. A server
   * may send a few (100 Continue, 102 Processing, 103 Early Hints); a flood of them is not an answer.
   */
  static final int MAX_INTERIM_RESPONSES = 16;

  /** The longest line of an answer handed over; a longer one fails the exchange ({@link TooLarge}). */
  static final int MAX_LINE_BYTES = 64 << 20;

  /** One exchange in flight; {@link #cancel()} drops its connection. */
  interface Exchange {
    void cancel();
  }

  /** A connection idle longer than this is not reused (servers close idle keep-alive connections). */
  private static final long MAX_IDLE_NANOS = TimeUnit.SECONDS.toNanos(3);

  private record Idle(Channel channel, long sinceNanos) {}

  private final EventLoopGroup group;
  private final Class<? extends SocketChannel> channelClass;
  private final int connectTimeoutMillis;
  private final Map<String, ConcurrentLinkedDeque<Idle>> idle = new ConcurrentHashMap<>();
  private SslContext ssl;

  NettyClient(long connectTimeoutUs) {
    boolean epoll = Epoll.isAvailable();
    IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    this.group = new MultiThreadIoEventLoopGroup(1, r -> {
      Thread t = new Thread(r, "blis-observe-io");
      t.setDaemon(true);
      return t;
    }, io);
    this.channelClass = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
    this.connectTimeoutMillis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, connectTimeoutUs / 1000));
  }

  /**
   * Sends a request and reads its answer whole: status and body. A body over {@code maxBodyBytes}
   * fails the answer with {@link TooLarge}.
   */
  CompletableFuture<Answer> fetch(HttpMethod method, URI uri, byte[] body, Map<String, String> headers,
      long maxBodyBytes) {
    CompletableFuture<Answer> result = new CompletableFuture<>();
    List<String> lines = new ArrayList<>();
    int[] status = {0};
    Exchange exchange = send(method, uri, body, headers, new Lines() {
      @Override
      public void onStatus(int s) {
        status[0] = s;
      }

      @Override
      public void onLine(String line) {
        lines.add(line);
      }

      @Override
      public void onEnd() {
        result.complete(new Answer(status[0], String.join("\n", lines)));
      }

      @Override
      public void onFailure(Throwable cause, boolean answered) {
        result.completeExceptionally(cause);
      }

      @Override
      public long maxBodyBytes() {
        return maxBodyBytes;
      }
    });
    // a caller that gives up (a timeout, a cancel) drops the connection
    result.whenComplete((a, err) -> {
      if (err != null) {
        exchange.cancel();
      }
    });
    return result;
  }

  /** A whole answer. */
  record Answer(int status, String body) {}

  /** Sends a request; its answer reaches {@code lines} as it arrives. */
  Exchange send(HttpMethod method, URI uri, byte[] body, Map<String, String> headers, Lines lines) {
    Handler handler = new Handler(uri, lines);
    FullHttpRequest request = request(method, uri, body, headers);
    Channel reused = pooled(handler.key);
    if (reused != null) {
      handler.start(reused, request);
    } else {
      connect(uri, handler, request);
    }
    return handler;
  }

  /** Opens a new connection for {@code handler}'s request. */
  private void connect(URI uri, Handler handler, FullHttpRequest request) {
    Bootstrap b = new Bootstrap().group(group).channel(channelClass)
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMillis)
        .handler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel ch) throws SSLException {
            if (uri.getScheme().equals("https")) {
              ch.pipeline().addLast(sslContext().newHandler(ch.alloc(), uri.getHost(), port(uri)));
            }
            ch.pipeline().addLast(new HttpClientCodec()).addLast(STRAY, new Stray());
          }
        });
    ChannelFuture connecting = b.connect(uri.getHost(), port(uri));
    handler.channel = connecting.channel();
    connecting.addListener(f -> {
      if (f.isSuccess()) {
        handler.start(connecting.channel(), request);
      } else {
        ReferenceCountUtil.release(request);
        handler.fail(f.cause(), false);
      }
    });
  }

  private synchronized SslContext sslContext() throws SSLException {
    if (ssl == null) {
      ssl = SslContextBuilder.forClient().build();
    }
    return ssl;
  }

  private static int port(URI uri) {
    return uri.getPort() > 0 ? uri.getPort() : uri.getScheme().equals("https") ? 443 : 80;
  }

  private static String key(URI uri) {
    return uri.getScheme() + "://" + uri.getHost() + ":" + port(uri);
  }

  private static FullHttpRequest request(HttpMethod method, URI uri, byte[] body, Map<String, String> headers) {
    String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
    if (uri.getRawQuery() != null) {
      path += "?" + uri.getRawQuery();
    }
    FullHttpRequest r = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, method, path,
        body == null ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(body));
    r.headers().set(HttpHeaderNames.HOST, uri.getPort() > 0 ? uri.getHost() + ":" + uri.getPort() : uri.getHost());
    r.headers().set(HttpHeaderNames.USER_AGENT, "blis-observe");
    r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
    if (body != null) {
      HttpUtil.setContentLength(r, body.length);
    }
    headers.forEach((k, v) -> r.headers().set(k, v));
    return r;
  }

  /** A pooled connection to {@code key} that is still open and not idle too long, or null. */
  private Channel pooled(String key) {
    ConcurrentLinkedDeque<Idle> q = idle.get(key);
    if (q == null) {
      return null;
    }
    Idle i;
    while ((i = q.pollFirst()) != null) {
      if (i.channel().isActive() && System.nanoTime() - i.sinceNanos() < MAX_IDLE_NANOS) {
        return i.channel();
      }
      i.channel().close();
    }
    return null;
  }

  private void release(String key, Channel ch) {
    idle.computeIfAbsent(key, k -> new ConcurrentLinkedDeque<>()).offerFirst(new Idle(ch, System.nanoTime()));
  }

  /** Closes every connection and stops the I/O thread. */
  @Override
  public void close() {
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }

  private static final String STRAY = "stray";

  /**
   * The last handler of every connection: what no exchange takes (bytes on an idle pooled
   * connection, an error after an exchange ended) closes the connection, as a connection out of
   * step with its requests is no use, and never reaches Netty's own end of the pipeline, which
   * would log it on stderr.
   */
  private static final class Stray extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ReferenceCountUtil.release(msg);
      ctx.close();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }

  /** One exchange: its handler in the connection's pipeline while the answer is read. */
  private final class Handler extends ChannelInboundHandlerAdapter implements Exchange {
    private final URI uri;
    private final String key;
    private final Lines lines;
    private final ByteArrayOutputStream partial = new ByteArrayOutputStream(256);
    private volatile Channel channel;
    private volatile boolean cancelled;
    private boolean done;
    private boolean answered;
    private boolean keepAlive;
    /** Interim (1xx) responses skipped so far; whether the rest of one is being skipped. */
    private int interim;
    private boolean inInterim;
    private long bodyBytes;

    Handler(URI uri, Lines lines) {
      this.uri = uri;
      this.key = key(uri);
      this.lines = lines;
    }

    void start(Channel ch, FullHttpRequest request) {
      channel = ch;
      ch.eventLoop().execute(() -> {
        if (cancelled) {
          ReferenceCountUtil.release(request);
          ch.close();
          return;
        }
        if (!ch.isActive()) { // a pooled connection the server closed meanwhile: open another
          connect(uri, this, request);
          return;
        }
        ch.pipeline().addBefore(STRAY, "exchange", this);
        ch.writeAndFlush(request).addListener(f -> {
          if (f.isSuccess()) {
            lines.onWritten();
          } else {
            fail(f.cause(), false);
            ch.close();
          }
        });
      });
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      try {
        if (done) {
          return;
        }
        if (msg instanceof io.netty.handler.codec.http.HttpObject o && o.decoderResult().isFailure()) {
          // what came back is not HTTP (the decoder's stand-in status is 999): a failure, not a status
          Throwable why = o.decoderResult().cause();
          fail(new IOException("the server's reply is not HTTP ("
              + (why == null || why.getMessage() == null ? "undecodable" : why.getMessage()) + ")"), false);
          ctx.close();
          return;
        }
        if (msg instanceof HttpResponse r && r.status().code() >= 100 && r.status().code() < 200) {
          // an interim response (100 Continue, 103 Early Hints): the answer follows it
          int code = r.status().code();
          if (code == 101) {
            fail(new IOException("the server switched protocols (HTTP 101), which this client did not ask for"), false);
            ctx.close();
          } else if (++interim > MAX_INTERIM_RESPONSES) {
            fail(new IOException("the server sent more than " + MAX_INTERIM_RESPONSES + " interim (1xx) responses"
                + " (HTTP " + code + ") and no answer"), false);
            ctx.close();
          } else {
            inInterim = !(msg instanceof LastHttpContent);
          }
          return;
        }
        if (inInterim) {
          inInterim = !(msg instanceof LastHttpContent);
          return; // an interim response has no body: its end only
        }
        if (msg instanceof HttpResponse r) {
          answered = true;
          keepAlive = HttpUtil.isKeepAlive(r);
          lines.onStatus(r.status().code());
        }
        if (msg instanceof HttpContent c) {
          bodyBytes += c.content().readableBytes();
          if (bodyBytes > lines.maxBodyBytes()) {
            fail(new TooLarge("the answer is larger than " + lines.maxBodyBytes() + " bytes"), answered);
            ctx.close();
            return;
          }
          if (!split(c.content())) {
            ctx.close();
            return;
          }
          if (msg instanceof LastHttpContent) {
            if (partial.size() > 0) {
              lines.onLine(partial.toString(StandardCharsets.UTF_8));
              partial.reset();
            }
            done = true;
            ctx.pipeline().remove(this);
            if (keepAlive && !cancelled) {
              release(key, ctx.channel());
            } else {
              ctx.close();
            }
            lines.onEnd();
          }
        }
      } finally {
        ReferenceCountUtil.release(msg);
      }
    }

    /**
     * Hands over every complete line in {@code content}; keeps the rest for the next chunk. Returns
     * false, the exchange failed, when a line is longer than {@link #MAX_LINE_BYTES}.
     */
    private boolean split(ByteBuf content) {
      int from = content.readerIndex();
      int end = content.writerIndex();
      while (from < end) {
        int nl = content.indexOf(from, end, (byte) '\n');
        if ((long) partial.size() + ((nl < 0 ? end : nl) - from) > MAX_LINE_BYTES) {
          partial.reset();
          fail(new TooLarge("a line of the answer is longer than " + MAX_LINE_BYTES + " bytes"), answered);
          return false;
        }
        if (nl < 0) {
          byte[] rest = new byte[end - from];
          content.getBytes(from, rest);
          partial.writeBytes(rest);
          return true;
        }
        byte[] part = new byte[nl - from];
        content.getBytes(from, part);
        partial.writeBytes(part);
        byte[] line = partial.toByteArray();
        partial.reset();
        int len = line.length > 0 && line[line.length - 1] == '\r' ? line.length - 1 : line.length;
        lines.onLine(new String(line, 0, len, StandardCharsets.UTF_8));
        from = nl + 1;
      }
      return true;
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      fail(new IOException("connection closed by the server"), answered);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      fail(cause, answered);
      ctx.close();
    }

    void fail(Throwable cause, boolean afterStatus) {
      if (done) {
        return;
      }
      done = true;
      lines.onFailure(cause, afterStatus);
    }

    @Override
    public void cancel() {
      cancelled = true;
      Channel ch = channel;
      if (ch != null) {
        ch.close();
      }
    }
  }
}
