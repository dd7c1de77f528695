package dev.tether.webui;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.PackagedDaemon;

/**
 * Issue 15's add flows through Executor's real web UI in headless Chromium: {@code src/test/browser/http-sources-walk.mjs}
 * starts the books servers (graphql-java's GraphQL server and a small REST API serving its OpenAPI document, in a
 * JVM of their own: the run's network namespace reaches nothing else), copies the UI from a real {@code executor web}
 * and walks it there and, side by side, on Tether as the desktop app's sidecar: Connect, OpenAPI, the document's URL, the preview,
 * "Add integration", its Tools tab; Connect, GraphQL, the endpoint, "Add source", its Tools tab. Executor is the
 * judge: the walk must pass on it, and Tether must list the same tools and make the same calls, all answered
 * 2xx with the same JSON shapes on the sources' routes, with no error on the page. On Tether the walk then pastes
 * Google's OAuth2 Discovery document into the OpenAPI form (Executor 1.5.9 reads one only from googleapis.com).
 */
class HttpSourcesBrowserIT {

    private static final Duration RUN_BOUND = Duration.ofMinutes(5);
    /** The tools the real Executor makes of Google's OAuth2 v2 Discovery document (SourcesAgainstExecutorTest compares them). */
    private static final List<String> DISCOVERY_TOOLS = List.of("getCertForOpenIdConnect", "tokeninfo", "userinfo.get", "userinfo.v2.me.get");

    @Test
    void theUisAddFlowsTurnAnOpenApiDocumentAndAGraphqlEndpointIntoTheSameTools() throws Exception {
        Path work = BrowserRuns.workDir("http-sources-browser");
        BrowserRuns.scripts();
        PackagedDaemon.jarOrSkip();

        Map<String, Object> config = BrowserRuns.settings(work, 47341, 47342, "http-sources-browser");
        config.put("java", ProcessHandle.current().info().command().orElse("java"));
        config.put("classpath", System.getProperty("java.class.path"));
        config.put("graphqlPort", 47343);
        config.put("openapiPort", 47344);
        config.put("graphqlUrl", "http://127.0.0.1:47343/graphql");
        config.put("openapiUrl", "http://127.0.0.1:47344/openapi.json");
        config.put("openapiTitle", "Books API");
        config.put("openapiOperations", 4);
        config.put("discoveryFile", Fixture.projectRoot().resolve("src/test/resources/discovery/oauth2-v2.json").toString());
        config.put("discoveryTools", DISCOVERY_TOOLS);
        JsonNode result = BrowserRuns.run("http-sources-walk.mjs", work, config, RUN_BOUND);
        Files.readAllLines(work.resolve("run.log")).forEach(System.out::println);
        JsonNode executor = result.path("executor");
        JsonNode tether = result.path("tether");

        assertThat(BrowserRuns.failedSteps(executor)).as("the walk on the real Executor: %s", executor.path("steps")).isEmpty();
        assertThat(BrowserRuns.failedSteps(tether)).as("the walk on Tether: %s", tether.path("steps")).isEmpty();
        assertThat(executor.path("steps").size()).isEqualTo(5);
        assertThat(tether.path("steps").size()).as("and on Tether a pasted Discovery document").isEqualTo(7);

        for (String kind : List.of("openapi", "graphql")) {
            assertThat(tether.path("integrations").path(kind)).as("the slug the UI chose").isEqualTo(executor.path("integrations").path(kind));
        }
        assertThat(names(tether, "openapi")).as("the OpenAPI tools").isEqualTo(names(executor, "openapi"))
                .containsExactly("books.addBook", "books.deleteBook", "books.getBook", "books.listBooks");
        assertThat(names(tether, "graphql")).as("the GraphQL tools").isEqualTo(names(executor, "graphql"))
                .containsExactly("mutation.addBook", "query.book", "query.books", "query.slow");
        assertThat(names(tether, "discovery")).as("the Discovery document's tools").isEqualTo(DISCOVERY_TOOLS);

        assertThat(BrowserRuns.failedCalls(tether.path("calls"))).as("calls that failed on Tether").isEmpty();
        assertThat(BrowserRuns.failedCalls(tether.path("discoveryCalls"))).as("calls that failed on Tether (Discovery)").isEmpty();
        assertThat(tether.path("consoleErrors").size() + tether.path("pageErrors").size())
                .as("errors on the page on Tether: %s %s", tether.path("consoleErrors"), tether.path("pageErrors")).isZero();
        // The add flows' own calls on both; a page's lazy reads (an integration's /config, fetched as its page renders)
        // may come after the walk has moved on, on either daemon, so those are compared where both made them.
        List<String> flows = List.of("POST /api/openapi/preview", "POST /api/openapi/specs", "POST /api/graphql/integrations");
        assertThat(sourceCalls(executor).keySet()).as("the sources' calls the UI made on Executor").containsAll(flows);
        assertThat(sourceCalls(tether).keySet()).as("the sources' calls the UI made on Tether").containsAll(flows);
        Map<String, JsonNode> tetherShapes = readShapes(tether);
        readShapes(executor).forEach((call, shape) -> {
            if (tetherShapes.containsKey(call)) {
                assertThat(tetherShapes.get(call)).as("the JSON shape of %s", call).isEqualTo(shape);
            }
        });
    }

    private static List<String> names(JsonNode run, String kind) {
        List<String> names = new ArrayList<>();
        run.path("tools").path(kind).forEach(name -> names.add(name.asString()));
        return names;
    }

    /** The calls of the sources' own routes, each with the JSON shape of its (last) answer. */
    private static Map<String, JsonNode> sourceCalls(JsonNode run) {
        Map<String, JsonNode> calls = new TreeMap<>();
        run.path("calls").forEach(call -> {
            if (isSourceRoute(call)) {
                calls.put(key(call), call.path("shape"));
            }
        });
        return calls;
    }

    /**
     * The sources' calls whose answer the browser kept, each with its last readable shape. A page that moves on while
     * an answer is still arriving leaves its body unreadable (walk.mjs marks it so); that says nothing of the daemon's
     * answer, only of the walk's timing, so such a call is compared through another answer of its route or not at all.
     */
    private static Map<String, JsonNode> readShapes(JsonNode run) {
        Map<String, JsonNode> shapes = new TreeMap<>();
        run.path("calls").forEach(call -> {
            if (isSourceRoute(call) && !call.path("shape").asString("").equals("unreadable")) {
                shapes.put(key(call), call.path("shape"));
            }
        });
        return shapes;
    }

    private static boolean isSourceRoute(JsonNode call) {
        String route = call.path("route").asString();
        return route.startsWith("/api/openapi/") || route.startsWith("/api/graphql/");
    }

    private static String key(JsonNode call) {
        return call.path("method").asString() + " " + call.path("route").asString();
    }
}
