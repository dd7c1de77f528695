package dev.tether.webui;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import dev.tether.testsupport.DockerContainers;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.NodeClients;
import dev.tether.testsupport.PackagedDaemon;
import dev.tether.testsupport.RequiresDocker;
import dev.tether.testsupport.TestImages;

/**
 * The Executor desktop app on Tether, through its real web UI in headless Chromium: {@code src/test/browser/run.mjs}
 * copies the UI from a real {@code executor web} at run time, walks it on that daemon and, side by side, launches
 * {@code bin/executor-sidecar} as the app does and walks it on Tether with HTTP Basic auth; both also reproduce the
 * refresh storm of the bug report. On Tether alone, a paused execution outlives the sidecar: killed with SIGKILL and
 * started again as the app would, its approval page {@code /resume/{id}} still shows the pause and approves it. And
 * on Tether alone, a remote server of MCP 2026-07-28 only ({@code src/test/clients/mcp-stateless-server.mjs}) lists
 * and runs its tools, and its {@code input_required} question pauses an execution that the approval page shows and
 * completes with the server's answer. This test
 * judges the record: Tether's calls succeed, nothing errs on the page, the routes and JSON shapes are Executor's, and
 * Tether strands no container and no {@code docker run} client.
 */
@RequiresDocker
class DesktopAppBrowserIT {

    private static final Duration RUN_BOUND = Duration.ofMinutes(20);

    /**
     * Calls the UI makes that Tether does not answer, each with what is missing. Kept explicit so nothing fails
     * silently: a route in this list that starts to succeed, or one outside it that fails, fails the test, and the
     * list is then corrected. On 2026-12-03, before the desktop-api and OAuth work landed, the run found
     * {@code GET /api/oauth/clients}, {@code GET /api/providers} and {@code GET /api/onepassword/config} answering
     * 404, and tool items and {@code /api/tools/schema} without Executor's fields; those routes have landed since,
     * so the lists hold only what is not known to be fixed. Not re-run after they landed: confirm on the next run.
     */
    private static final Map<String, String> KNOWN_FAILING = new TreeMap<>(Map.of());

    /** Routes that answer, but not with Executor's shape; same rule. */
    private static final Map<String, String> KNOWN_SHAPE_GAPS = new TreeMap<>(Map.of());

    /** Steps of the walk that fail on Tether; same rule. */
    private static final Set<String> KNOWN_STEP_GAPS = new TreeSet<>(Set.of());

    @Test
    void theDesktopAppsUiWorksOnTetherAsOnExecutorAndTheRefreshStormStrandsNothing() throws Exception {
        Path work = BrowserRuns.workDir("desktop-app-browser");
        BrowserRuns.scripts();
        PackagedDaemon.jarOrSkip();
        String image = TestImages.nodeImage();

        Map<String, Object> config = BrowserRuns.settings(work, 47311, 47312, "browser-test");
        config.put("image", image);
        config.put("everything", Fixture.everythingCommand()); // the elicitation steps' server, a plain node child
        // a remote server of MCP 2026-07-28 only, started by run.mjs inside the run's network namespace
        config.put("statelessServer", NodeClients.directory().resolve("mcp-stateless-server.mjs").toString());
        config.put("runId", "b" + ProcessHandle.current().pid());
        config.put("stormIntegrations", 4);
        config.put("stormRounds", 10);
        config.put("abandonAfterMs", 300);
        config.put("settleMs", 5000);
        config.put("tetherBoundMs", 30000);
        JsonNode result = BrowserRuns.run("run.mjs", work, config, RUN_BOUND);
        Files.readAllLines(work.resolve("run.log")).stream().filter(line -> line.startsWith("[browser"))
                .forEach(System.out::println);
        JsonNode executor = result.path("executor");
        JsonNode tether = result.path("tether");
        System.out.printf("[desktop app] UI files copied: %d; sidecar ready after %d ms%n", result.path("uiFiles").asInt(),
                result.path("ready").path("afterMs").asLong());
        System.out.printf("[desktop app] the real Executor left after the storm: %s containers, %s docker run clients%n",
                executor.path("left").path("containers").asString("?"), executor.path("left").path("clients").asString("?"));
        System.out.printf("[desktop app] Tether left after the storm: %s containers, %s docker run clients%n",
                tether.path("left").path("containers").asString("?"), tether.path("left").path("clients").asString("?"));

        assertThat(executor.path("walk").path("ok").asBoolean()).as("the walk on the real Executor: %s", executor.path("walk"))
                .isTrue();
        Set<String> failedSteps = new TreeSet<>();
        tether.path("walk").path("failed").forEach(step -> failedSteps.add(step.path("step").asString()));
        assertThat(tether.path("walk").has("error")).as("the walk on Tether: %s", tether.path("walk")).isFalse();
        assertThat(failedSteps).as("steps that failed on Tether: %s", tether.path("walk")).isEqualTo(KNOWN_STEP_GAPS);
        assertThat(tether.path("storm").path("ok").asBoolean()).as("the storm on Tether: %s", tether.path("storm")).isTrue();

        List<String> failed = BrowserRuns.failedCalls(tether.path("calls"));
        Set<String> failedRoutes = new TreeSet<>(failed.stream().map(line -> line.substring(0, line.lastIndexOf(' '))).toList());
        assertThat(failedRoutes).as("calls that failed on Tether (all: %s)", failed).isEqualTo(KNOWN_FAILING.keySet());
        assertThat(errors(tether)).as("console and page errors on Tether").isEqualTo(knownErrors(errors(tether)));

        Map<String, Set<String>> executorShapes = shapes(executor);
        Map<String, Set<String>> tetherShapes = shapes(tether);
        List<String> differences = new ArrayList<>();
        Set<String> differing = new TreeSet<>();
        Set<String> unread = union(unreadOnly(executor), unreadOnly(tether));
        System.out.println("[desktop app] routes not compared, their answers unreadable on one side: " + unread);
        for (String route : union(executorShapes.keySet(), tetherShapes.keySet())) {
            if (unread.contains(route)) {
                continue;
            }
            Set<String> expected = executorShapes.getOrDefault(route, Set.of());
            Set<String> actual = tetherShapes.getOrDefault(route, Set.of());
            if (!expected.equals(actual)) {
                differing.add(route);
                Set<String> missing = new TreeSet<>(expected);
                missing.removeAll(actual);
                Set<String> extra = new TreeSet<>(actual);
                extra.removeAll(expected);
                differences.add(route + "\n    only Executor's: " + missing + "\n    only Tether's:   " + extra);
            }
        }
        System.out.println("[desktop app] routes whose answers differ from Executor's:\n  " + String.join("\n  ", differences));
        assertThat(differing).as("routes and JSON shapes that differ from Executor's: %s", differences)
                .isEqualTo(union(KNOWN_FAILING.keySet(), KNOWN_SHAPE_GAPS.keySet()));

        assertThat(tether.path("durable").path("ok").asBoolean()).as("a pause across kill -9 of the sidecar, approved on its page: %s",
                tether.path("durable")).isTrue();
        System.out.printf("[desktop app] %s paused, the sidecar killed with SIGKILL and started again, approved on /resume: %s%n",
                tether.path("durable").path("executionId").asString(), tether.path("durable").path("text").asString());
        JsonNode modern = tether.path("modern");
        assertThat(modern.path("ok").asBoolean()).as("a 2026-07-28-only server's question answered on the approval page: %s", modern)
                .isTrue();
        System.out.printf("[desktop app] %s paused on a 2026-07-28 server's input_required (%d requests, none of the handshake),"
                + " approved on /resume: %s%n", modern.path("executionId").asString(), modern.path("asked").asInt(),
                modern.path("text").asString());
        DockerContainers.awaitNoneWithLabel("dev.tether.browser", config.get("runId") + "-tether-durable", Duration.ofSeconds(30));
        assertThat(tether.path("left").path("containers").asInt(-1)).as("containers Tether left").isZero();
        assertThat(tether.path("left").path("clients").asInt(-1)).as("docker run clients Tether left").isZero();
        assertThat(result.path("sidecarExit").path("code").asInt(-1)).as("the sidecar stops cleanly on SIGTERM")
                .isIn(0, 130, 143);
    }

    /**
     * Per route, what its successful answers held: every path into the JSON ({@code [].address}, {@code .config.args[]})
     * with the type found there, over all the calls of that route. A union of paths rather than whole shapes, so that
     * an empty list in one answer and a full one in another compare as what they are, not as different shapes.
     */
    private static Map<String, Set<String>> shapes(JsonNode run) {
        Map<String, Set<String>> shapes = new TreeMap<>();
        for (JsonNode call : run.path("calls")) {
            int status = call.path("status").asInt();
            String key = call.path("method").asString() + " " + call.path("route").asString();
            Set<String> seen = shapes.computeIfAbsent(key, unused -> new TreeSet<>());
            JsonNode shape = call.path("shape");
            if (status < 200 || status >= 300) {
                seen.add("status " + status);
            }
            else if (!shape.isNull() && !shape.asString("").equals("unreadable")) {
                paths("", shape, seen);
            }
        }
        return shapes;
    }

    /**
     * Routes none of whose answers could be read: the page moved on before the browser kept the body. Nothing is known
     * of their shape, so comparing them would report a difference that is only the walk's timing.
     */
    private static Set<String> unreadOnly(JsonNode run) {
        Set<String> called = new TreeSet<>();
        Set<String> read = new TreeSet<>();
        for (JsonNode call : run.path("calls")) {
            String key = call.path("method").asString() + " " + call.path("route").asString();
            called.add(key);
            if (!call.path("shape").asString("").equals("unreadable")) {
                read.add(key);
            }
        }
        called.removeAll(read);
        return called;
    }

    /**
     * Flattens a shape as walk.mjs writes it: a type name, an object of shapes, or {@code {"array": [shapes]}}. Three
     * levels deep: below that lie values such as a tool's JSON Schema, which are data, not the API's shape.
     */
    private static void paths(String at, JsonNode shape, Set<String> into) {
        if (at.chars().filter(c -> c == '.' || c == '[').count() > 3) {
            return;
        }
        if (shape.isString()) {
            into.add(at + "=" + shape.asString());
        }
        else if (shape.isObject() && shape.size() == 1 && shape.has("array") && shape.get("array").isArray()) {
            into.add(at + "=array");
            shape.get("array").forEach(element -> paths(at + "[]", element, into));
        }
        else if (shape.isObject()) {
            into.add(at + "=object");
            for (String key : shape.propertyNames()) {
                paths(at + "." + key, shape.get(key), into);
            }
        }
    }

    private static List<String> errors(JsonNode run) {
        List<String> errors = new ArrayList<>();
        run.path("consoleErrors").forEach(error -> errors.add("console: " + error.path("text").asString()));
        run.path("pageErrors").forEach(error -> errors.add("page: " + error.path("text").asString()));
        return errors;
    }

    /** The errors a failing call of {@link #KNOWN_FAILING} causes in the page (a 404 logs "Failed to load resource"). */
    private static List<String> knownErrors(List<String> errors) {
        if (KNOWN_FAILING.isEmpty()) {
            return List.of();
        }
        return errors.stream().filter(error -> error.contains("Failed to load resource") || error.contains("FrontendHandledError")
                || error.contains("RouteNotFound")).toList();
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> all = new TreeSet<>(a);
        all.addAll(b);
        return all;
    }
}
