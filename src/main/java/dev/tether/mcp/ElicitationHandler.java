package dev.tether.mcp;

import java.util.Objects;
import java.util.function.Function;

import io.modelcontextprotocol.spec.McpSchema.ElicitRequest;
import io.modelcontextprotocol.spec.McpSchema.ElicitResult;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * Answers a server's {@code elicitation/create} (a form to fill in, or a URL to visit) asked during a tool call.
 * Whoever can put the question to a user puts a handler into the Reactor context of the call
 * ({@code call.contextWrite(ElicitationHandler.of(handler))}), as with {@link ProgressListener}: the call passes
 * through the pool, the lease and the call counters, none of which has anything to do with questions.
 *
 * <p>A call without a handler gets {@link #ACCEPT_ALL}: Executor's answer for a call outside an execution (its
 * non-interactive hosts run with {@code onElicitation: "accept-all"}).
 */
@FunctionalInterface
public interface ElicitationHandler {

    /** Accepts with no content, as Executor does where no user can be asked. */
    ElicitationHandler ACCEPT_ALL = request -> Mono.just(new ElicitResult(ElicitResult.Action.ACCEPT, null));

    /** The handler a subscriber put in its context; {@link #ACCEPT_ALL} when it put none. */
    static ElicitationHandler of(ContextView context) {
        return Objects.requireNonNull(context.getOrDefault(ElicitationHandler.class, ACCEPT_ALL));
    }

    /**
     * The user's answer. The URL of a URL elicitation is http or https (others never get here); the call's timeout
     * does not run while the answer is awaited, so whoever asks bounds the wait. Cancelled when the call ends.
     */
    Mono<ElicitResult> elicit(ElicitRequest request);

    /** Puts {@code handler} into the context of the call it is written to. */
    static Function<Context, Context> of(ElicitationHandler handler) {
        return context -> context.put(ElicitationHandler.class, handler);
    }
}
