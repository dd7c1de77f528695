package dev.tether.webui;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.testsupport.ExecutorCli;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.Prerequisites;

/**
 * What the browser ITs share to run a script of {@code src/test/browser} against the real Executor and Tether as
 * the desktop app's sidecar: its work directory, the settings every script reads, and the run itself.
 */
final class BrowserRuns {

    /** Debian's Chromium; {@code TETHER_TEST_CHROMIUM} names another (pointed nowhere, it shows that CI fails without one). */
    static final Path CHROMIUM = Path.of(System.getenv().getOrDefault("TETHER_TEST_CHROMIUM", "/usr/bin/chromium"));
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private BrowserRuns() {
    }

    /** {@code target/<name>}, emptied of an earlier run; kept after the run: the record, logs and screenshots. */
    static Path workDir(String name) throws IOException {
        Path work = Fixture.projectRoot().resolve("target").resolve(name);
        delete(work);
        Files.createDirectories(work);
        return work;
    }

    /** The scripts' directory; without Chromium or the scripts' packages the test is skipped, or fails in CI. */
    static Path scripts() {
        Path browser = Fixture.projectRoot().resolve("src/test/browser");
        Prerequisites.require(Files.isExecutable(CHROMIUM), "no Chromium at " + CHROMIUM, ".ci/run installs Debian's chromium");
        Prerequisites.require(Files.isDirectory(browser.resolve("node_modules/playwright-core")),
                "no playwright-core in src/test/browser/node_modules", ".ci/run runs npm ci in src/test/browser");
        return browser;
    }

    /**
     * The settings every script reads: where to work, Chromium, the real Executor's CLI and port, the sidecar and
     * its port, and the secrets both daemons are started with. Fixed ports: the run has a network namespace of its own.
     */
    static Map<String, Object> settings(Path work, int executorPort, int sidecarPort, String secretsPrefix) {
        Path cli = ExecutorCli.installed().orElseThrow(() -> new IllegalStateException("needs src/test/clients installed"));
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("workDir", work.resolve("run").toString());
        config.put("uiDir", work.resolve("web-ui").toString());
        config.put("output", work.resolve("result.json").toString());
        config.put("chromium", CHROMIUM.toString());
        config.put("executorCli", cli.toString());
        config.put("executorPort", executorPort);
        config.put("token", secretsPrefix + "-token");
        config.put("sidecar", Fixture.projectRoot().resolve("bin/executor-sidecar").toString());
        config.put("sidecarPort", sidecarPort);
        config.put("password", secretsPrefix + "-password");
        return config;
    }

    /**
     * Runs {@code script} with {@code config} in its own network namespace, bounded; its output goes to
     * {@code run.log} in the work directory (inherited, it would garble failsafe's channel). Answers its record.
     */
    static JsonNode run(String script, Path work, Map<String, Object> config, Duration bound) throws IOException, InterruptedException {
        Path configFile = work.resolve("config.json");
        Files.writeString(configFile, JSON.writeValueAsString(config));
        Process run = new ProcessBuilder(isolated(List.of("node", script, configFile.toString())))
                .directory(scripts().toFile()).redirectErrorStream(true)
                .redirectOutput(work.resolve("run.log").toFile()).start();
        if (!run.waitFor(bound.toSeconds(), TimeUnit.SECONDS)) {
            run.descendants().forEach(ProcessHandle::destroyForcibly);
            run.destroyForcibly();
            throw new AssertionError("the browser run of " + script + " did not end within " + bound);
        }
        return JSON.readTree(Files.readString(work.resolve("result.json")));
    }

    /** The steps of a walk's record that failed, as {@code step: error}; one line saying so when the walk did not run. */
    static Set<String> failedSteps(JsonNode run) {
        Set<String> failed = new TreeSet<>();
        run.path("steps").forEach(step -> {
            if (!step.path("ok").asBoolean()) {
                failed.add(step.path("step").asString() + ": " + step.path("error").asString());
            }
        });
        if (run.isMissingNode() || run.isNull()) {
            failed.add("the walk did not run");
        }
        return failed;
    }

    /** The API calls of a walk's record ({@code {method, route, status}}) that did not answer 2xx, as {@code METHOD route status}. */
    static List<String> failedCalls(JsonNode calls) {
        List<String> failed = new ArrayList<>();
        calls.forEach(call -> {
            if (call.path("status").asInt() < 200 || call.path("status").asInt() >= 300) {
                failed.add(call.path("method").asString() + " " + call.path("route").asString() + " " + call.path("status").asInt());
            }
        });
        return failed;
    }

    /**
     * The command in a network namespace of its own, holding only loopback, when the machine allows one (Chromium
     * aborts requests with ERR_NETWORK_CHANGED whenever Docker adds or removes an interface); otherwise as it is.
     */
    private static List<String> isolated(List<String> command) throws IOException, InterruptedException {
        Process probe = new ProcessBuilder("unshare", "--net", "true").redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!probe.waitFor(10, TimeUnit.SECONDS) || probe.exitValue() != 0) {
            System.err.println("[WARNING] cannot make a network namespace: Chromium may see Docker's interface changes");
            return command;
        }
        List<String> wrapped = new ArrayList<>(List.of("unshare", "--net", "sh", "-c", "ip link set lo up && exec \"$@\"", "sh"));
        wrapped.addAll(command);
        return wrapped;
    }

    /** Deletes a run's directory of an earlier run, if any. */
    private static void delete(Path dir) throws IOException {
        if (Files.exists(dir)) {
            try (var paths = Files.walk(dir)) {
                for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(path);
                }
            }
        }
    }
}
