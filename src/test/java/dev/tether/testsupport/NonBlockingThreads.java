package dev.tether.testsupport;

import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * What BlockHound, installed for every test by its JUnit platform integration, lets through on non-blocking
 * threads (Netty event loops, Reactor's parallel scheduler). Everything else that blocks there fails the call,
 * and with it the test that made it. Each allowance says why it is not a defect.
 */
public final class NonBlockingThreads implements BlockHoundIntegration {

    @Override
    public void applyTo(BlockHound.Builder builder) {
        builder
                // SecureRandom (UUIDs, child ids) reads /dev/urandom, which on Linux never blocks once the kernel's
                // pool is seeded at boot: a short read syscall, not a wait.
                .allowBlockingCallsInside("java.security.SecureRandom", "nextBytes")
                // Netty loads its native epoll transport once per JVM, in a static initializer, on whichever thread
                // first touches it: a one-time read of the jar, not a wait in a request.
                .allowBlockingCallsInside("io.netty.util.internal.NativeLibraryLoader", "load")
                // springdoc builds the OpenAPI document on the first GET /api/docs, scanning class files on the
                // event loop, and caches it. A known cost of the first docs request (pre-loading it instead would
                // add to start-up), not of the request path.
                .allowBlockingCallsInside("org.springdoc.api.AbstractOpenApiResource", "getOpenApi")
                // Jackson builds a type's deserializer once and caches it under a lock: concurrent first requests of one
                // body type (a burst of POST /api/executions) wait on each other for that one build, not on I/O.
                .allowBlockingCallsInside("tools.jackson.databind.deser.DeserializerCache", "_createAndCacheValueDeserializer")
                // Netty 4.2's adaptive allocator grows its magazines under a StampedLock when event loops contend for
                // buffers (many concurrent clients in one test JVM): a short critical section of the allocator's own,
                // not a wait for I/O; other Netty users' BlockHound rules allow it too (line/armeria#6344).
                .allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "tryExpandMagazines")
                // Logback appends under a lock of its own, to a console buffered by the test runner.
                .allowBlockingCallsInside("ch.qos.logback.core.OutputStreamAppender", "writeBytes")
                .blockingMethodCallback(method -> {
                    BlockingOperationError error = new BlockingOperationError(method);
                    // The callers catch and translate errors; print where it happened so the failure is findable.
                    error.printStackTrace();
                    throw error;
                });
    }
}
