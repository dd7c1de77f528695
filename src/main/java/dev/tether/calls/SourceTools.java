package dev.tether.calls;

import java.util.Map;

import reactor.core.publisher.Mono;

import dev.tether.store.Connection;
import dev.tether.store.HttpSourceConfig;
import dev.tether.store.Integration;
import dev.tether.store.StoredTool;

/**
 * The tools of one kind of HTTP source (OpenAPI, GraphQL): each call is one request of its own, no MCP session.
 * {@link ToolCalls} hands a call to the {@code SourceTools} of the integration's kind.
 */
public interface SourceTools {

    /** The kind of {@link HttpSourceConfig} served: {@code openapi} or {@code graphql}. */
    String kind();

    /**
     * Makes the tool's request with the connection's credential and answers Executor's {@code ToolResult} as code
     * sees it: {@code {ok: true, data, http?: {status, headers}}} or {@code {ok: false, error: {code, message,
     * status?, details?}}}. Cancelling aborts the request. Fails only when there is no answer at all.
     */
    Mono<Map<String, Object>> invoke(Integration integration, Connection connection, Map<String, String> credentials,
            StoredTool tool, Map<String, Object> arguments);
}
