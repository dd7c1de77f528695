package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.OsProcesses;

/**
 * Every error Tether answers on a route of Executor 1.5.9, route by route and status by status, against the
 * running daemon: where 1.5.9's OpenAPI document declares a schema for that route and status, the body must validate
 * against it. Where it declares none (a 400 of a route whose input 1.5.9 never refuses, or a status of Tether's own)
 * the answer must be one of the few listed in {@link #TETHER_OWN}: an error 1.5.9 defines elsewhere, in its shape, or
 * Tether's own {@code HttpApiDecodeError} with a message naming what is wrong.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "tether.api.token=" + ExecutorErrorBodiesTest.TOKEN, "tether.docker.reap-interval=1h" })
@DirtiesContext
class ExecutorErrorBodiesTest {

    static final String TOKEN = "error-bodies-token";
    private static final Path DATA_DIR = DataDirs.create("errors");
    private static final String RUN = UUID.randomUUID().toString().substring(0, 12);

    /** Errors 1.5.9 has no schema for, as "METHOD route status tag". */
    private static final Set<String> TETHER_OWN = Set.of(
            "GET /connections 400 HttpApiDecodeError",
            "GET /connections/{owner}/{integration}/{name} 400 HttpApiDecodeError",
            "DELETE /connections/{owner}/{integration}/{name} 400 HttpApiDecodeError",
            "POST /connections/{owner}/{integration}/{name}/refresh 400 HttpApiDecodeError",
            "GET /tools 400 HttpApiDecodeError",
            "GET /tools/schema 400 HttpApiDecodeError",
            "PATCH /integrations/{slug} 400 HttpApiDecodeError",
            "POST /mcp/servers/{slug}/config 404 IntegrationNotFoundError");

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", DATA_DIR::toString);
    }

    private record Case(String method, String path, String route, Object body, int status, String tag) {
    }

    @Test
    void everyErrorBodyIsOneThatExecutorDeclaresForItsRouteOrOneOfTethersOwn() {
        ApiClient api = new ApiClient(port, TOKEN);
        ExecutorOpenApi executor = ExecutorOpenApi.load();
        List<String> command = Fixture.command("--run=" + RUN);
        Map<String, Object> server = new LinkedHashMap<>(Map.of("transport", "stdio", "name", "Known", "slug", "known",
                "command", command.get(0), "args", new ArrayList<>(command.subList(1, command.size()))));
        try {
            assertThat(api.post("/api/mcp/servers", server).status()).isEqualTo(200);
            assertThat(api.post("/api/connections", TetherClient.defaultConnection("known")).status()).isEqualTo(200);

            String connection = "/connections/{owner}/{integration}/{name}";
            List<Case> cases = List.of(
                    new Case("GET", "/api/integrations/nope", "/integrations/{slug}", null, 404, "IntegrationNotFoundError"),
                    new Case("PATCH", "/api/integrations/nope", "/integrations/{slug}", Map.of("description", "x"), 404, "IntegrationNotFoundError"),
                    new Case("PATCH", "/api/integrations/known", "/integrations/{slug}", Map.of("name", ""), 400, "HttpApiDecodeError"),
                    new Case("GET", "/api/connections?owner=team", "/connections", null, 400, "HttpApiDecodeError"),
                    new Case("POST", "/api/connections", "/connections", "{\"owner\":", 400, "InvalidConnectionInputError"),
                    new Case("POST", "/api/connections", "/connections", Map.of("owner", "team", "name", "x", "integration", "known",
                            "template", "none", "values", Map.of()), 400, "InvalidConnectionInputError"),
                    new Case("POST", "/api/connections", "/connections", Map.of("owner", "org", "name", "x", "integration", "known",
                            "template", "none"), 400, "InvalidConnectionInputError"),
                    new Case("POST", "/api/connections", "/connections", TetherClient.defaultConnection("known"), 400,
                            "InvalidConnectionInputError"),
                    new Case("POST", "/api/connections", "/connections", TetherClient.defaultConnection("nope"), 404,
                            "IntegrationNotFoundError"),
                    new Case("GET", "/api/connections/org/known/nope", connection, null, 404, "ConnectionNotFoundError"),
                    new Case("GET", "/api/connections/team/known/default", connection, null, 400, "HttpApiDecodeError"),
                    new Case("DELETE", "/api/connections/org/known/nope", connection, null, 404, "ConnectionNotFoundError"),
                    new Case("DELETE", "/api/connections/team/known/nope", connection, null, 400, "HttpApiDecodeError"),
                    new Case("POST", "/api/connections/org/known/nope/refresh", connection + "/refresh", null, 404, "ConnectionNotFoundError"),
                    new Case("POST", "/api/connections/team/known/nope/refresh", connection + "/refresh", null, 400, "HttpApiDecodeError"),
                    new Case("GET", "/api/tools?owner=team", "/tools", null, 400, "HttpApiDecodeError"),
                    new Case("GET", "/api/tools/schema", "/tools/schema", null, 400, "HttpApiDecodeError"),
                    new Case("GET", "/api/tools/schema?address=tools.known.org.default.nope", "/tools/schema", null, 404, "ToolNotFoundError"),
                    new Case("POST", "/api/mcp/servers", "/mcp/servers", "not json", 400, "McpConnectionError"),
                    new Case("POST", "/api/mcp/servers", "/mcp/servers", Map.of("name", "No Endpoint"), 400, "McpConnectionError"),
                    new Case("POST", "/api/mcp/servers", "/mcp/servers", server, 409, "IntegrationAlreadyExistsError"),
                    new Case("POST", "/api/mcp/probe", "/mcp/probe", Map.of("endpoint", "ftp://x"), 400, "McpConnectionError"),
                    new Case("POST", "/api/mcp/servers/known/config", "/mcp/servers/{slug}/config", Map.of(), 400, "McpConnectionError"),
                    new Case("POST", "/api/mcp/servers/nope/config", "/mcp/servers/{slug}/config",
                            Map.of("config", Map.of("transport", "stdio", "command", "node")), 404, "IntegrationNotFoundError"));

            for (Case each : cases) {
                ApiClient.Reply reply = api.send(each.method(), each.path(), each.body());
                String what = each.method() + " " + each.path() + " -> " + reply;
                assertThat(reply.status()).as(what).isEqualTo(each.status());
                assertThat(reply.tag()).as(what).isEqualTo(each.tag());
                if (executor.declares(each.method(), each.route(), each.status())) {
                    executor.assertConforms(each.method(), each.route(), each.status(), reply.json());
                }
                else {
                    assertThat(TETHER_OWN).as(what + ": 1.5.9 declares no schema for it").contains(
                            each.method() + " " + each.route() + " " + each.status() + " " + each.tag());
                    if (executor.definesError(each.tag())) {
                        executor.assertConformsToError(each.tag(), reply.json());
                    }
                    else {
                        assertThat(reply.message()).as(what).isNotBlank();
                    }
                }
            }
        }
        finally {
            api.delete("/api/integrations/known");
            OsProcesses.matching("--run=" + RUN).forEach(ProcessHandle::destroyForcibly);
        }
    }
}
