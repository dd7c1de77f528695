package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;

import dev.tether.api.TetherClient.Reply;
import dev.tether.testsupport.Await;
import dev.tether.testsupport.Fixture;

/**
 * The Grafana dashboard the chart ships asks only for series the daemon exports: every metric name in its PromQL is
 * in {@code /actuator/prometheus} of a real daemon that has checked, synced, called and torn down a server.
 */
@InProcess
class DashboardTest {

    private static final Path DASHBOARD = Fixture.projectRoot().resolve("helm/tether/dashboards/tether.json");

    /**
     * Names the dashboard shows that another branch adds: the lease queue gauge ({@code tether.sessions.lease.waiting})
     * comes with the hot-path work. Empty this once it is merged.
     */
    /** What the dashboard must show, at least: the issue's list. */
    private static final List<String> REQUIRED = List.of("tether_children_live", "tether_children_spawned_total",
            "tether_children_teardown_total", "tether_children_reaped_total", "tether_sessions_live",
            "tether_health_checks_total", "tether_catalog_sync_seconds_count", "tether_calls_seconds_count",
            "tether_calls_seconds_bucket", "tether_sessions_lease_waiting", "jvm_memory_used_bytes");

    private static final Pattern IDENTIFIER = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Set<String> KEYWORDS = Set.of("by", "without", "on", "ignoring", "group_left", "group_right",
            "bool", "and", "or", "unless", "offset", "inf", "nan");

    @TempDir
    static Path root;

    @Test
    void everyMetricTheDashboardQueriesIsExportedByARunningDaemon() throws IOException {
        String text = Files.readString(DASHBOARD);
        JsonNode dashboard = ApiClient.JSON.readTree(text);
        Set<String> queried = metricNames(dashboard);
        assertThat(queried).containsAll(REQUIRED);
        // The PromQL reading below must not drop a series: every tether_ name anywhere in the file, found without it.
        Set<String> named = new TreeSet<>();
        Matcher tetherName = Pattern.compile("\\btether_[a-zA-Z0-9_:]*").matcher(text);
        while (tetherName.find()) {
            named.add(tetherName.group());
        }
        assertThat(queried).as("metric names read from the queries").containsAll(named);
        assertThat(dashboard.path("templating").path("list").findValuesAsString("type")).contains("datasource");

        Path dataDir = root.resolve("dashboard");
        try (ConfigurableApplicationContext daemon = Daemons.start(dataDir, "--tether.api.token=t0ken")) {
            TetherClient tether = new TetherClient(Daemons.port(daemon), "t0ken");
            String slug = tether.register("dash", Fixture.command());
            assertThat(tether.health(slug).json().path("status").asString()).isEqualTo("healthy");
            Reply sync = tether.post("/api/connections/org/" + slug + "/default/refresh", null);
            assertThat(sync.status()).as(sync.toString()).isEqualTo(200);
            Reply call = tether.post("/api/tools/call",
                    Map.of("address", "tools." + slug + ".org.default.echo", "args", Map.of("text", "hi")));
            assertThat(call.status()).as(call.toString()).isEqualTo(200);
            assertThat(tether.delete("/api/mcp/servers/" + slug).status()).isIn(200, 204);
            Await.until(() -> tether.metrics().sum("tether_children_live") == 0
                    && tether.metrics().sum("tether_children_teardown_total") > 0, Duration.ofSeconds(30),
                    () -> "the server's children torn down");

            String scrape = tether.metrics().text();
            Set<String> exported = exportedNames(scrape);
            List<String> missing = new ArrayList<>();
            for (String name : queried) {
                if (!exported.contains(name)) {
                    missing.add(name);
                }
            }
            assertThat(missing).as("metric names the dashboard queries that the daemon does not export").isEmpty();
        }
    }

    /** The metric names in every panel's queries (rows included) and in the template variables. */
    static Set<String> metricNames(JsonNode dashboard) {
        Set<String> names = new TreeSet<>();
        for (JsonNode expr : dashboard.path("panels").findValues("expr")) {
            names.addAll(metricNames(expr.asString()));
        }
        Matcher labelValues = Pattern.compile("label_values\\(\\s*([a-zA-Z_:][a-zA-Z0-9_:]*)")
                .matcher(dashboard.path("templating").toString());
        while (labelValues.find()) {
            names.add(labelValues.group(1));
        }
        return names;
    }

    /**
     * A metric name in PromQL is an identifier that is not a function (followed by "("), a keyword, a label (inside
     * {@code {}} or the parentheses after {@code by}/{@code without}), a range or a Grafana variable.
     */
    static Set<String> metricNames(String promql) {
        String stripped = promql.replaceAll("\"(\\\\.|[^\"\\\\])*\"", "\"\"")
                .replaceAll("\\{[^}]*}", " ")
                .replaceAll("\\[[^]]*]", " ")
                .replaceAll("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)", " ")
                .replaceAll("\\$\\w+", " ");
        Set<String> names = new TreeSet<>();
        Matcher identifier = IDENTIFIER.matcher(stripped);
        while (identifier.find()) {
            String name = identifier.group();
            boolean function = stripped.substring(identifier.end()).stripLeading().startsWith("(");
            boolean number = identifier.start() > 0 && Character.isDigit(stripped.charAt(identifier.start() - 1));
            if (!function && !number && !KEYWORDS.contains(name.toLowerCase())) {
                names.add(name);
            }
        }
        return names;
    }

    private static Set<String> exportedNames(String scrape) {
        Set<String> names = new TreeSet<>();
        for (String line : scrape.split("\n")) {
            if (!line.isBlank() && !line.startsWith("#")) {
                Matcher name = IDENTIFIER.matcher(line);
                if (name.lookingAt()) {
                    names.add(name.group());
                }
            }
        }
        return names;
    }

    /** What Grafana needs to import it: unique ids, a place on the grid, and queries bound to the chosen data source. */
    @Test
    void theDashboardIsWellFormedForGrafana() throws IOException {
        JsonNode dashboard = ApiClient.JSON.readTree(Files.readString(DASHBOARD));
        assertThat(dashboard.path("uid").asString()).isEqualTo("tether");
        assertThat(dashboard.path("title").asString()).isNotBlank();
        assertThat(dashboard.path("schemaVersion").asInt()).isPositive();
        JsonNode datasource = dashboard.path("templating").path("list").get(0);
        assertThat(datasource.path("type").asString()).isEqualTo("datasource");
        assertThat(datasource.path("query").asString()).isEqualTo("prometheus");

        Set<Integer> ids = new java.util.HashSet<>();
        for (JsonNode panel : dashboard.path("panels")) {
            String what = panel.path("title").asString();
            assertThat(ids.add(panel.path("id").asInt())).as(what + ": unique id").isTrue();
            assertThat(panel.path("type").asString()).as(what).isIn("row", "timeseries", "stat");
            for (String grid : List.of("h", "w", "x", "y")) {
                assertThat(panel.path("gridPos").path(grid).isInt()).as(what + " gridPos." + grid).isTrue();
            }
            assertThat(panel.path("gridPos").path("x").asInt() + panel.path("gridPos").path("w").asInt()).as(what).isLessThanOrEqualTo(24);
            if (!panel.path("type").asString().equals("row")) {
                assertThat(panel.path("targets").size()).as(what + " has queries").isPositive();
                Set<String> refIds = new java.util.HashSet<>();
                for (JsonNode target : panel.path("targets")) {
                    assertThat(refIds.add(target.path("refId").asString())).as(what + ": unique refId").isTrue();
                    assertThat(target.path("datasource").path("uid").asString()).as(what).isEqualTo("${datasource}");
                    assertThat(target.path("expr").asString()).as(what).isNotBlank();
                }
            }
        }
    }
}
