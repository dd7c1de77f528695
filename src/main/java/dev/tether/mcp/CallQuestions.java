package dev.tether.mcp;

import java.net.URI;
import java.time.Duration;
import java.util.Deque;
import java.util.Locale;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.ElicitRequest;
import io.modelcontextprotocol.spec.McpSchema.ElicitResult;
import io.modelcontextprotocol.spec.McpSchema.ElicitUrlRequest;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * Puts a server's {@code elicitation/create} to the tool call it belongs to. MCP does not say which request a
 * question is about (over stdio there is nothing to tell), so a session's question goes to the oldest of its calls in
 * flight that can ask a user (whose context has an {@link ElicitationHandler}); with none, it gets
 * {@link ElicitationHandler#ACCEPT_ALL}. Two calls that can both ask, on one session at once, may thus see each
 * other's questions: the price of a shared session.
 */
final class CallQuestions {

    /** A call in flight: who answers its questions, and how many of them wait for an answer now. */
    static final class Asker {

        private final ElicitationHandler handler;
        private final AtomicInteger waiting = new AtomicInteger();
        private final Sinks.Many<Integer> waitingChanges = Sinks.many().replay().latest();

        Asker(ElicitationHandler handler) {
            this.handler = handler;
            waitingChanges.tryEmitNext(0);
        }

        /**
         * Fires {@code timeout} after the call started, not counting the time its questions waited for an answer:
         * a user who takes minutes to fill in a form does not time the call out.
         */
        Publisher<Long> deadline(Duration timeout, Scheduler timer) {
            return waitingChanges.asFlux()
                    .map(count -> count > 0)
                    .distinctUntilChanged()
                    .switchMap(asking -> asking ? Mono.<Long>never() : Mono.delay(timeout, timer))
                    .take(1);
        }

        /** Whether someone can put the call's questions to a user. */
        boolean canAsk() {
            return handler != ElicitationHandler.ACCEPT_ALL;
        }

        Mono<ElicitResult> ask(ElicitRequest request) {
            return Mono.defer(() -> {
                changed(waiting.incrementAndGet());
                return handler.elicit(request);
            }).doFinally(signal -> changed(waiting.decrementAndGet()));
        }

        private void changed(int count) {
            // Two questions of one call may be answered on two threads: the sink takes one emission at a time.
            synchronized (this) {
                waitingChanges.tryEmitNext(count);
            }
        }
    }

    private final Deque<Asker> inFlight = new ConcurrentLinkedDeque<>();

    /** Runs {@code call} as a call in flight whose questions {@code handler} answers. */
    <T> Mono<T> during(ElicitationHandler handler, Function<Asker, Mono<T>> call) {
        return Mono.using(() -> {
            Asker asker = new Asker(handler);
            inFlight.addLast(asker);
            return asker;
        }, call, inFlight::remove);
    }

    /** The session's handler of {@code elicitation/create}. */
    Mono<ElicitResult> ask(ElicitRequest request) {
        return Mono.defer(() -> {
            if (request instanceof ElicitUrlRequest url && !webUrl(url.url())) {
                return Mono.error(new McpError(new McpSchema.JSONRPCResponse.JSONRPCError(McpSchema.ErrorCodes.INVALID_PARAMS,
                        "refused: the URL of a URL elicitation must be http or https, was " + scheme(url.url()), null)));
            }
            return inFlight.stream().filter(Asker::canAsk).findFirst()
                    .map(asker -> asker.ask(request))
                    .orElseGet(() -> ElicitationHandler.ACCEPT_ALL.elicit(request));
        });
    }

    static boolean webUrl(String url) {
        String scheme = scheme(url);
        return (scheme.equals("http") || scheme.equals("https")) && host(url) != null;
    }

    private static String scheme(String url) {
        try {
            String scheme = URI.create(url).getScheme();
            return scheme == null ? "none" : scheme.toLowerCase(Locale.ROOT);
        }
        catch (IllegalArgumentException ex) {
            return "unreadable";
        }
    }

    private static @Nullable String host(String url) {
        try {
            return URI.create(url).getHost();
        }
        catch (IllegalArgumentException ex) {
            return null;
        }
    }
}
