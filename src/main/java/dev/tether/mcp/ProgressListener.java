package dev.tether.mcp;

import java.util.function.Function;

import io.modelcontextprotocol.spec.McpSchema.ProgressNotification;
import reactor.util.context.Context;

/**
 * Hears the {@code notifications/progress} of a tool call. Whoever wants a call's progress puts a listener into
 * the Reactor context of the call ({@code call.contextWrite(ProgressListener.of(listener))}); the call then asks
 * the server for progress under a token of its own and hands each notification for that token to the listener.
 * Through the context, because a call passes through the pool, the lease and the call counters on its way to the
 * session, and none of them has anything to do with progress.
 */
@FunctionalInterface
public interface ProgressListener {

    /**
     * One progress notification of the call, as the server sent it: its token is the one Tether gave the server,
     * not any token of the caller's. Called on the session's reading thread, so it must not block.
     */
    void onProgress(ProgressNotification progress);

    /** Puts {@code listener} into the context of the call it is written to. */
    static Function<Context, Context> of(ProgressListener listener) {
        return context -> context.put(ProgressListener.class, listener);
    }
}
