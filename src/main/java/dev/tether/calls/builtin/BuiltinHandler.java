package dev.tether.calls.builtin;

import reactor.core.publisher.Mono;

/** What one built-in does when called. */
@FunctionalInterface
public interface BuiltinHandler {

    /**
     * Answers a call: a listed built-in its {@code data} (code receives it as {@code {ok: true, data}}), a runtime
     * helper its value. Fails with {@link InvalidToolArgumentsException} for arguments it cannot take.
     *
     * @param tool      the built-in called, as {@link BuiltinTools} lists it
     * @param arguments what the caller sent: usually a map, but any JSON value (see {@link Arguments#of})
     */
    Mono<Object> run(BuiltinTool tool, Object arguments);
}
