package dev.tether.agent.stateless;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.RequestPredicates;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

import dev.tether.daemon.Version;
import dev.tether.agent.AgentEvents;
import dev.tether.agent.AgentProperties;
import dev.tether.agent.codemode.CodeModeOffer;
import dev.tether.calls.ToolCalls;
import dev.tether.catalog.CatalogService;
import dev.tether.execution.ExecutionProperties;
import dev.tether.execution.Executions;
import dev.tether.execution.ResumeAnywhere;
import dev.tether.store.secrets.StoreKeys;

/**
 * The stateless era's door on {@code POST /mcp} and {@code POST /mcp/tools}: a router function, so it is asked before
 * the handshake era's controllers on the same paths, and it takes only the requests that say they are of its era
 * ({@link StatelessTransport#stateless}). Everything else, {@code GET} and {@code DELETE} included, is the
 * handshake era's as before.
 */
@Component
final class StatelessEndpoints implements RouterFunction<ServerResponse>, DisposableBean {

    private final StatelessTransport transport;
    private final StatelessCodeMode codeMode;
    private final StatelessTools tools;
    private final RouterFunction<ServerResponse> routes;

    StatelessEndpoints(CodeModeOffer offer, Executions executions, ResumeAnywhere resumes, CatalogService catalogs,
            ToolCalls calls, StoreKeys keys, AgentEvents events, AgentProperties agent, ExecutionProperties execution) {
        McpJsonMapper json = McpJsonDefaults.getMapper();
        // found once here: the SDK finds it with a ServiceLoader, which reads jars, on each call otherwise
        JsonSchemaValidator schemas = McpJsonDefaults.getSchemaValidator();
        StatelessServers servers = new StatelessServers(json, schemas, agent.listTtl(), keys, execution.pausedExpiry(), catalogs);
        this.transport = new StatelessTransport(json, events);
        this.codeMode = new StatelessCodeMode(offer, executions, resumes, json, servers);
        this.tools = new StatelessTools(catalogs, calls, json, servers, Version.TETHER);
        HandlerFunction<ServerResponse> codeModeHandler = request -> transport.serve(request, codeMode.server());
        HandlerFunction<ServerResponse> toolsHandler = request -> transport.serve(request, tools.server());
        this.routes = org.springframework.web.reactive.function.server.RouterFunctions
                .route(RequestPredicates.POST("/mcp").and(StatelessTransport::stateless), codeModeHandler)
                .andRoute(RequestPredicates.POST("/mcp/tools").and(StatelessTransport::stateless), toolsHandler);
    }

    @Override
    public Mono<HandlerFunction<ServerResponse>> route(ServerRequest request) {
        return routes.route(request);
    }

    /** Ends every {@code subscriptions/listen} stream, so that a stopping daemon waits for none. */
    @Override
    public void destroy() {
        codeMode.server().closeGracefully();
        tools.server().closeGracefully();
    }
}
