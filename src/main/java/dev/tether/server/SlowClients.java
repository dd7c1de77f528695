package dev.tether.server;

import java.time.Duration;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufHolder;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.DecoderResultProvider;
import io.netty.handler.codec.PrematureChannelClosureException;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.stereotype.Component;
import reactor.netty.NettyPipeline;
import reactor.netty.http.server.HttpServer;

/**
 * Bounds what a slow, idle or silent client can hold, one connection at a time: a request's head must arrive within
 * {@code tether.server.header-timeout} (from the connection's opening, or from the first byte of a later request on a
 * kept-alive connection), its body within {@code tether.server.body-timeout} after that, a kept-alive connection
 * with nothing in flight lives {@code tether.server.idle-timeout}, and one whose client takes none of its answer for
 * {@code tether.server.write-timeout} (it reads nothing; its answer waits in Netty's outbound buffer) is closed then,
 * rather than holding its request's place and its answer's memory for ever. A connection past its bound is
 * closed; one line says so, at most once a second with the count since the last one. Reactor Netty's own read and
 * request timeouts start only once a request's head is read, and its idle timeout is reset by every byte, so a client
 * sending a header a byte at a time (slowloris) passed them all (issue 18).
 * <p>
 * Nothing is refused at accept: a cap on open connections was one an idle crowd could fill, and 512 idle sockets
 * locked every other client out (issue 24). An idle connection costs a file and a few kilobytes of the heap; what a
 * request may cost is bounded where it is admitted ({@link Admission}).
 */
@Component
final class SlowClients implements NettyServerCustomizer {

    private static final String FIRST_BYTES = "tether.slowClients.firstBytes";
    private static final String REQUESTS = "tether.slowClients.requests";

    private final ServerLimitsProperties properties;
    private final AtomicInteger open = new AtomicInteger();
    private final Deadline headerTimeout;
    private final Deadline bodyTimeout;
    private final Deadline writeTimeout;

    /** One bound: its setting, its counter and its log line, throttled apart from the other bounds' lines. */
    private record Deadline(Duration timeout, Counter closed, ThrottledLog log, String reason) {

        Deadline(Duration timeout, MeterRegistry registry, String tag, String reason) {
            this(timeout, Counter.builder("tether.server.closed").tag("reason", tag)
                    .description("HTTP connections the server closed because the client was too slow").register(registry),
                    new ThrottledLog(LoggerFactory.getLogger(SlowClients.class)), reason);
        }
    }

    SlowClients(ServerLimitsProperties properties, MeterRegistry registry) {
        this.properties = properties;
        Gauge.builder("tether.server.connections", open, AtomicInteger::get)
                .description("HTTP connections open now, idle ones included").register(registry);
        this.headerTimeout = new Deadline(properties.headerTimeout(), registry, "header_timeout",
                "sent no whole request head within {} (tether.server.header-timeout)");
        this.bodyTimeout = new Deadline(properties.bodyTimeout(), registry, "body_timeout",
                "sent no whole request body within {} (tether.server.body-timeout)");
        this.writeTimeout = new Deadline(properties.writeTimeout(), registry, "write_timeout",
                "took none of its answer for {} (tether.server.write-timeout)");
    }

    @Override
    public HttpServer apply(HttpServer server) {
        return server.idleTimeout(properties.idleTimeout())
                .doOnChannelInit((observer, channel, remote) -> guard(channel));
    }

    /** Connections open now, counted from their opening to their closing. */
    int open() {
        return open.get();
    }

    private void guard(Channel channel) {
        open.incrementAndGet();
        channel.closeFuture().addListener(closed -> open.decrementAndGet());
        Deadlines deadlines = new Deadlines(channel);
        ChannelPipeline pipeline = channel.pipeline();
        pipeline.addFirst(FIRST_BYTES, deadlines.firstBytes());
        if (pipeline.get(NettyPipeline.HttpCodec) != null) {
            pipeline.addAfter(NettyPipeline.HttpCodec, REQUESTS, deadlines.requests());
        }
        else {
            pipeline.addLast(REQUESTS, deadlines.requests());
        }
        deadlines.awaitHead();
    }

    /** The deadlines of one connection; every method runs on its event loop. */
    private final class Deadlines {

        private final Channel channel;
        private @Nullable Future<?> deadline;
        private @Nullable Future<?> stalled;
        /** Bytes of this connection's completed writes. */
        private long flushed;
        /** Between a response's end and the next request's first byte: an idle kept-alive connection. */
        private boolean idle;
        private boolean inRequest;

        Deadlines(Channel channel) {
            this.channel = channel;
        }

        void awaitHead() {
            cancel(deadline);
            deadline = closeAfter(headerTimeout);
        }

        /** Raw bytes: the first of a request on a kept-alive connection starts its head's deadline. */
        ChannelInboundHandlerAdapter firstBytes() {
            return new ChannelInboundHandlerAdapter() {
                @Override
                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                    if (idle && msg instanceof ByteBuf bytes && bytes.isReadable()) {
                        idle = false;
                        awaitHead();
                    }
                    ctx.fireChannelRead(msg);
                }
            };
        }

        /**
         * Decoded parts: a head ends its deadline and starts the body's, the body's end ends that one; output waiting
         * for the socket is watched for progress ({@link #watchOutput}).
         */
        ChannelDuplexHandler requests() {
            return new ChannelDuplexHandler() {
                @Override
                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                    if (msg instanceof DecoderResultProvider decoded
                            && decoded.decoderResult().cause() instanceof PrematureChannelClosureException) {
                        // Closed in the middle of a head, by its client or by a deadline here: nobody to answer, and
                        // Reactor Netty would warn once per connection, a thousand lines for a slowloris.
                        ReferenceCountUtil.release(msg);
                        return;
                    }
                    if (msg instanceof HttpRequest) {
                        inRequest = true;
                        cancel(deadline);
                        deadline = closeAfter(bodyTimeout);
                    }
                    if (msg instanceof LastHttpContent) {
                        deadline = cancel(deadline);
                    }
                    ctx.fireChannelRead(msg);
                }

                @Override
                public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                    if (msg instanceof LastHttpContent && inRequest) {
                        inRequest = false;
                        deadline = cancel(deadline);
                        idle = true;
                    }
                    long size = msg instanceof ByteBufHolder holder ? holder.content().readableBytes()
                            : msg instanceof ByteBuf bytes ? bytes.readableBytes() : 0;
                    ChannelPromise written = size == 0 ? promise : promise.unvoid();
                    if (size > 0) {
                        written.addListener(done -> {
                            if (done.isSuccess()) {
                                flushed += size;
                            }
                        });
                    }
                    ctx.write(msg, written);
                    if (stalled == null) {
                        watchOutput();
                    }
                }

                @Override
                public void channelInactive(ChannelHandlerContext ctx) {
                    deadline = cancel(deadline);
                    stalled = cancel(stalled);
                    ctx.fireChannelInactive();
                }
            };
        }

        /**
         * While the connection has output Netty has not handed to the socket, looks every write timeout at how much left
         * since the last look; none (the client reads nothing, the socket is full) closes the connection. A slow reader
         * makes progress and stays; an answer that ends stops the watch until the next write.
         */
        private void watchOutput() {
            long before = written();
            stalled = channel.eventLoop().schedule(() -> {
                ChannelOutboundBuffer output = channel.unsafe().outboundBuffer();
                if (output == null || output.isEmpty()) {
                    stalled = null;
                }
                else if (written() != before) {
                    watchOutput();
                }
                else {
                    stalled = null;
                    expire(writeTimeout);
                }
            }, writeTimeout.timeout().toNanos(), TimeUnit.NANOSECONDS);
        }

        /** Bytes handed to the socket so far: of the writes that completed, and of the one under way. */
        private long written() {
            ChannelOutboundBuffer output = channel.unsafe().outboundBuffer();
            return flushed + (output == null ? 0 : output.currentProgress());
        }

        /** Closes the connection once {@code bound} has passed, unless the returned deadline is cancelled first. */
        private Future<?> closeAfter(Deadline bound) {
            return channel.eventLoop().schedule(() -> expire(bound), bound.timeout().toNanos(), TimeUnit.NANOSECONDS);
        }

        private void expire(Deadline bound) {
            bound.closed().increment();
            bound.log().warn("closed a connection from {} that " + bound.reason(), channel.remoteAddress(), bound.timeout());
            channel.close();
        }

        private static @Nullable Future<?> cancel(@Nullable Future<?> scheduled) {
            if (scheduled != null) {
                scheduled.cancel(false);
            }
            return null;
        }
    }
}
