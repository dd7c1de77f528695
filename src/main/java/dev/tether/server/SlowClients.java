package dev.tether.server;

import java.net.SocketAddress;
import java.time.Duration;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.stereotype.Component;
import reactor.netty.NettyPipeline;
import reactor.netty.http.server.HttpServer;

/**
 * Bounds what a slow or idle client can hold: a request's head must arrive within {@code tether.server.header-timeout}
 * (from the connection's opening, or from the first byte of a later request on a kept-alive connection), its body
 * within {@code tether.server.body-timeout} after that, and no more than {@code tether.server.max-connections} are open at
 * once. A connection over a bound is closed; one line says so, at most once a second with the count since the last
 * one, so that a flood of them cannot flood the log. Reactor Netty's own read and request timeouts start only once a
 * request's head is read, and its idle timeout is reset by every byte, so a client sending a header a byte at a time
 * (slowloris) passed them all: 1,000 such sockets were still open after a minute (issue 18).
 */
@Component
final class SlowClients implements NettyServerCustomizer {

    private static final Logger log = LoggerFactory.getLogger(SlowClients.class);
    private static final String FIRST_BYTES = "tether.slowClients.firstBytes";
    private static final String REQUESTS = "tether.slowClients.requests";

    private final ServerLimitsProperties properties;
    private final AtomicInteger open = new AtomicInteger();
    private final Closures closures = new Closures();

    SlowClients(ServerLimitsProperties properties) {
        this.properties = properties;
    }

    @Override
    public HttpServer apply(HttpServer server) {
        return server.idleTimeout(properties.idleTimeout())
                .doOnChannelInit((observer, channel, remote) -> guard(channel, remote));
    }

    /** Connections open now, counted from their opening to their closing. */
    int open() {
        return open.get();
    }

    private void guard(Channel channel, SocketAddress remote) {
        if (open.incrementAndGet() > properties.maxConnections()) {
            open.decrementAndGet();
            closures.closed("refused a connection from {} at tether.server.max-connections ({} open)", remote,
                    properties.maxConnections());
            channel.close();
            return;
        }
        channel.closeFuture().addListener(closed -> open.decrementAndGet());
        Deadlines deadlines = new Deadlines(channel, remote);
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
        private final SocketAddress remote;
        private Future<?> deadline;
        /** Between a response's end and the next request's first byte: an idle kept-alive connection. */
        private boolean idle;
        private boolean inRequest;

        Deadlines(Channel channel, SocketAddress remote) {
            this.channel = channel;
            this.remote = remote;
        }

        void awaitHead() {
            arm(properties.headerTimeout(), "sent no whole request head within {} (tether.server.header-timeout)");
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

        /** Decoded parts: a head ends its deadline and starts the body's, the body's end ends that one. */
        ChannelDuplexHandler requests() {
            return new ChannelDuplexHandler() {
                @Override
                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                    if (msg instanceof HttpRequest) {
                        inRequest = true;
                        arm(properties.bodyTimeout(), "sent no whole request body within {} (tether.server.body-timeout)");
                    }
                    if (msg instanceof LastHttpContent) {
                        disarm();
                    }
                    ctx.fireChannelRead(msg);
                }

                @Override
                public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                    if (msg instanceof LastHttpContent && inRequest) {
                        inRequest = false;
                        disarm();
                        idle = true;
                    }
                    ctx.write(msg, promise);
                }

                @Override
                public void channelInactive(ChannelHandlerContext ctx) {
                    disarm();
                    ctx.fireChannelInactive();
                }
            };
        }

        private void arm(Duration timeout, String reason) {
            disarm();
            deadline = channel.eventLoop().schedule(() -> {
                closures.closed("closed a connection from {} that " + reason, remote, timeout);
                channel.close();
            }, timeout.toNanos(), TimeUnit.NANOSECONDS);
        }

        private void disarm() {
            if (deadline != null) {
                deadline.cancel(false);
                deadline = null;
            }
        }
    }

    /** Logs closures at most once a second, each line with how many were not logged since the last one. */
    private static final class Closures {

        private final AtomicLong nextLine = new AtomicLong();
        private final AtomicLong unlogged = new AtomicLong();

        void closed(String format, SocketAddress remote, Object bound) {
            long now = System.nanoTime();
            long next = nextLine.get();
            if (now - next >= 0 && nextLine.compareAndSet(next, now + TimeUnit.SECONDS.toNanos(1))) {
                long others = unlogged.getAndSet(0);
                log.warn(format + (others > 0 ? " (and " + others + " more since the last such line)" : ""), remote, bound);
            }
            else {
                unlogged.incrementAndGet();
            }
        }
    }
}
