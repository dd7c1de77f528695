package dev.tether.calls;

import java.util.Map;

import reactor.core.publisher.Mono;

import dev.tether.http.AuthTemplates;
import dev.tether.store.Connection;
import dev.tether.store.HttpSourceConfig;
import dev.tether.store.Integration;

/**
 * The tools of one kind of HTTP source (OpenAPI, GraphQL): each call is one request of its own, no MCP session.
 * {@link ToolCalls} hands a call to the {@code SourceTools} of the integration's kind.
 */
public interface SourceTools {

    /** The kind of {@link HttpSourceConfig} served: {@code openapi} or {@code graphql}. */
    String kind();

    /**
     * Makes the request of {@code operation} (the tool's entry of {@link HttpSourceConfig#operations()}) with the
     * connection's credential rendered as {@code auth}, and answers Executor's {@code ToolResult} as code
     * sees it: {@code {ok: true, data, http?: {status, headers}}} or {@code {ok: false, error: {code, message,
     * status?, details?}}}. Cancelling aborts the request. Fails only when there is no answer at all.
     */
    Mono<Map<String, Object>> invoke(Integration integration, Map<String, Object> operation, AuthTemplates.Rendered auth,
            Connection connection, Map<String, Object> arguments);
}
