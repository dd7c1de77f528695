package dev.tether.server;

import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelOption;
import io.netty.buffer.PooledByteBufAllocator;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.stereotype.Component;
import reactor.netty.http.server.HttpServer;

/**
 * Netty's own pressure signal on memory: the bytes of the HTTP server's buffers that live buffers hold (request bodies
 * being read, answers being written), against {@code tether.server.max-buffer-memory}. Past it, new requests are shed
 * ({@link Admission}) and those in flight finish with the headroom left, instead of every one of them failing on
 * Netty's {@code OutOfDirectMemoryError}.
 * <p>
 * The server's connections get an allocator of their own, a pooled one, because only a pooled allocator tells what is
 * in use ({@link PooledByteBufAllocator#pinnedDirectMemory()}): Netty 4.2's default (adaptive) allocator reports the
 * chunks it holds, which stay at a burst's peak for reuse, so a budget on them would shed every request after one
 * large upload. Read at most every {@value #READ_EVERY_MS} ms: the sum walks the arenas.
 */
@Component
final class BufferMemory implements NettyServerCustomizer {

    private static final long READ_EVERY_MS = 20;

    private final long budget;
    private final PooledByteBufAllocator allocator = new PooledByteBufAllocator(true);
    private volatile long used;
    private volatile long readAt = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(READ_EVERY_MS);

    BufferMemory(ServerLimitsProperties limits, MeterRegistry registry) {
        this.budget = limits.maxBufferMemory().toBytes();
        Gauge.builder("tether.server.buffers", this, BufferMemory::read).baseUnit("bytes")
                .description("bytes of the HTTP server's buffers held by live ones (tether.server.max-buffer-memory bounds them)")
                .register(registry);
    }

    @Override
    public HttpServer apply(HttpServer server) {
        return server.childOption(ChannelOption.ALLOCATOR, allocator);
    }

    /** Whether the buffers in use take more than the budget, as last read. */
    boolean over() {
        long now = System.nanoTime();
        if (now - readAt >= TimeUnit.MILLISECONDS.toNanos(READ_EVERY_MS)) {
            readAt = now;
            used = read();
        }
        return used > budget;
    }

    private long read() {
        return allocator.pinnedDirectMemory() + allocator.pinnedHeapMemory();
    }
}
