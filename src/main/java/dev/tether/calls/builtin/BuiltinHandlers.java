package dev.tether.calls.builtin;

import java.util.Map;

/**
 * A feature's contribution to the built-in {@code executor} integration: a Spring bean implementing this, in the
 * feature's own package and named for it ({@code providers.ProviderBuiltins}), names the built-ins it answers; a
 * built-in that is the twin of a route runs through {@link BuiltinArguments} with the checks the route's controller
 * uses too. {@link BuiltinTools} collects every such bean once the context is up; each path must be one of the tools it lists (Executor's names, descriptions and schemas are in
 * {@code executor-tools.json}) or a runtime helper, and no two beans may answer the same path. A listed tool that
 * no bean answers fails its calls with {@link BuiltinUnavailableException}.
 */
public interface BuiltinHandlers {

    /** The built-ins this feature answers, by path under {@code tools.} (e.g. {@code executor.coreTools.oauth.start}). */
    Map<String, BuiltinHandler> handlers();
}
