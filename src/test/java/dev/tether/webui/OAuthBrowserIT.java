package dev.tether.webui;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.NodeClients;
import dev.tether.testsupport.PackagedDaemon;

/**
 * Issue 14's OAuth flow through Executor's real web UI in headless Chromium: {@code src/test/browser/oauth-walk.mjs}
 * starts the TypeScript MCP SDK's OAuth example, copies the UI from a real {@code executor web} and walks it there,
 * and, side by side, on Tether as the desktop app's sidecar: add the remote server by its URL, "Add connection" with the OAuth
 * method the probe declared, "Connect" (the UI probes, registers a client dynamically, starts the flow and opens the
 * authorization URL in a popup, which the example approves at once and sends to the daemon's
 * {@code /api/oauth/callback}), then the integration's Tools tab lists the server's tools. Executor is the judge:
 * the walk must pass on it first, and Tether must make the same OAuth calls, all answered 2xx, with no error on
 * the page.
 */
class OAuthBrowserIT {

    private static final Duration RUN_BOUND = Duration.ofMinutes(5);
    private static final List<String> TOOLS = List.of("greet", "multi_greet");

    @Test
    void theUisOAuthSignInConnectsARemoteServerAndItsToolsShow() throws Exception {
        Path work = BrowserRuns.workDir("oauth-browser");
        BrowserRuns.scripts();
        PackagedDaemon.jarOrSkip();

        Map<String, Object> config = BrowserRuns.settings(work, 47331, 47332, "oauth-browser");
        config.put("node", Fixture.nodeBinary().toString());
        config.put("oauthExample", NodeClients.directory()
                .resolve("node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js").toString());
        config.put("mcpPort", 47333);
        config.put("authPort", 47334);
        config.put("mcpUrl", "http://localhost:47333/mcp");
        config.put("tools", TOOLS);
        JsonNode result = BrowserRuns.run("oauth-walk.mjs", work, config, RUN_BOUND);
        Files.readAllLines(work.resolve("run.log")).forEach(System.out::println);
        JsonNode executor = result.path("executor");
        JsonNode tether = result.path("tether");

        assertThat(BrowserRuns.failedSteps(executor)).as("the walk on the real Executor: %s", executor.path("steps")).isEmpty();
        assertThat(BrowserRuns.failedSteps(tether)).as("the walk on Tether: %s", tether.path("steps")).isEmpty();
        assertThat(tether.path("steps").size()).isEqualTo(executor.path("steps").size()).isEqualTo(3);
        assertThat(popup(tether)).as("the popup went to the authorization server, then to Tether's callback")
                .containsExactly("http://localhost:47334/authorize", "http://127.0.0.1:47332/api/oauth/callback");

        assertThat(BrowserRuns.failedCalls(tether.path("calls"))).as("calls that failed on Tether").isEmpty();
        assertThat(tether.path("consoleErrors").size() + tether.path("pageErrors").size())
                .as("errors on the page on Tether: %s %s", tether.path("consoleErrors"), tether.path("pageErrors")).isZero();
        assertThat(oauthCalls(tether)).as("the OAuth calls the UI made").isEqualTo(oauthCalls(executor))
                .contains("POST /api/mcp/probe", "POST /api/oauth/probe", "POST /api/oauth/clients/register-dynamic",
                        "POST /api/oauth/start");
    }

    private static List<String> popup(JsonNode run) {
        List<String> visited = new ArrayList<>();
        run.path("popups").path(0).forEach(url -> visited.add(url.asString()));
        return visited;
    }

    /** The distinct OAuth and probe routes a run called (how often depends on the UI's refetching, not the daemon). */
    private static Set<String> oauthCalls(JsonNode run) {
        Set<String> routes = new TreeSet<>();
        run.path("calls").forEach(call -> {
            String route = call.path("route").asString();
            if (route.startsWith("/api/oauth/") || route.endsWith("/probe")) {
                routes.add(call.path("method").asString() + " " + route);
            }
        });
        return routes;
    }
}
