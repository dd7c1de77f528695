package dev.tether.http;

import org.reactivestreams.Publisher;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import reactor.core.publisher.Mono;

/** A body read whole into bytes, bounded: what a source answers, and a spec posted to Tether. */
public final class BodyBytes {

    private BodyBytes() {
    }

    /**
     * The body's bytes, empty for an empty body; one longer than {@code maxBytes} fails with
     * {@link DataBufferLimitException} before more is buffered. Every buffer is released.
     */
    public static Mono<byte[]> read(Publisher<? extends DataBuffer> body, int maxBytes) {
        return DataBufferUtils.join(body, maxBytes).map(BodyBytes::bytes);
    }

    private static byte[] bytes(DataBuffer buffer) {
        try {
            byte[] bytes = new byte[buffer.readableByteCount()];
            buffer.read(bytes);
            return bytes;
        }
        finally {
            DataBufferUtils.release(buffer);
        }
    }
}
