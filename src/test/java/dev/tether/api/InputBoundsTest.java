package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.tether.api.ApiClient.Reply;
import dev.tether.api.input.Bounds;

/**
 * Every string field of every route has a length bound checked at the API: one character over it is a 400 naming
 * the field, and nothing stored changes. Wrong JSON types and environment names or values the OS cannot take are
 * 400s too, at registration, not at spawn.
 */
class InputBoundsTest extends BadInputDaemon {

    private static final String KEPT = "kept";

    @BeforeEach
    void keptServer() {
        if (api.get("/api/integrations/" + KEPT).status() == 404) {
            Reply created = api.post("/api/mcp/servers", Map.of("transport", "stdio", "name", KEPT, "command", "node",
                    "args", List.of("server.js"), "env", Map.of("A", "1")));
            assertThat(created.status()).as(created.toString()).isEqualTo(200);
            Reply connection = api.post("/api/connections", Map.of("owner", "user", "name", "alice", "integration", KEPT,
                    "template", "API_TOKEN", "value", "secret"));
            assertThat(connection.status()).as(connection.toString()).isEqualTo(200);
        }
    }

    @Test
    void aValueOneCharacterOverItsBoundInAnyFieldOfAnyRouteIsA400NamingItAndChangesNothing() {
        String before = state();
        List<Probe> probes = new ArrayList<>();

        Map<String, Object> stdio = Map.of("transport", "stdio", "name", "n", "command", "node", "args", List.of("a"),
                "env", Map.of("E", "v"), "cwd", "/tmp");
        Map<String, Object> remote = Map.of("transport", "remote", "name", "n", "endpoint", "http://127.0.0.1:9/mcp",
                "remoteTransport", "auto", "queryParams", Map.of("q", "v"), "headers", Map.of("H", "v"));
        for (Map<String, Object> config : List.of(stdio, remote)) {
            Map<String, Object> server = new LinkedHashMap<>(config);
            server.put("description", "d");
            server.put("slug", "s");
            for (String field : server.keySet()) {
                probes.add(Probe.body("POST", "/api/mcp/servers", field, over(server, field)));
                if (!field.equals("name") && !field.equals("description") && !field.equals("slug")) {
                    probes.add(Probe.body("POST", "/api/mcp/servers/" + KEPT + "/config", "config." + field,
                            Map.of("config", over(config, field))));
                }
            }
        }
        Map<String, Object> probe = Map.of("endpoint", "http://127.0.0.1:9/mcp", "headers", Map.of("H", "v"),
                "queryParams", Map.of("q", "v"));
        probe.keySet().forEach(field -> probes.add(Probe.body("POST", "/api/mcp/probe", field, over(probe, field))));
        Map<String, Object> names = Map.of("name", "n", "description", "d");
        names.keySet().forEach(field -> probes.add(Probe.body("PATCH", "/api/integrations/" + KEPT, field, over(names, field))));
        Map<String, Object> connection = Map.of("owner", "user", "name", "bob", "integration", KEPT, "template", "API_TOKEN",
                "identityLabel", "bob@example.com", "value", "v");
        connection.keySet().forEach(field -> probes.add(Probe.body("POST", "/api/connections", field, over(connection, field))));
        probes.add(Probe.body("POST", "/api/connections", "values", Map.of("owner", "user", "name", "bob", "integration", KEPT,
                "template", "T", "values", Map.of("T", long_("values")))));
        probes.add(Probe.body("POST", "/api/connections", "values name", Map.of("owner", "user", "name", "bob", "integration",
                KEPT, "template", "T", "values", Map.of(long_("name"), "v"))));
        Map<String, Object> update = Map.of("identityLabel", "l", "value", "v");
        update.keySet().forEach(field -> probes.add(Probe.body("PATCH", "/api/connections/user/" + KEPT + "/alice", field,
                over(update, field))));
        probes.add(Probe.body("PATCH", "/api/connections/user/" + KEPT + "/alice", "values",
                Map.of("values", Map.of("API_TOKEN", long_("values")))));
        Map<String, Object> validate = Map.of("integration", KEPT, "owner", "user", "template", "T", "value", "v");
        validate.keySet().forEach(field -> probes.add(Probe.body("POST", "/api/connections/validate", field, over(validate, field))));
        Map<String, Object> checkAll = Map.of("integration", KEPT, "owner", "user");
        checkAll.keySet().forEach(field -> probes.add(Probe.body("POST", "/api/connections/health", field, over(checkAll, field))));
        probes.add(Probe.body("POST", "/api/tools/call", "address", Map.of("address", long_("address"))));

        for (String route : List.of("GET /api/integrations/%s", "DELETE /api/integrations/%s", "GET /api/mcp/servers/%s",
                "DELETE /api/mcp/servers/%s")) {
            probes.add(Probe.path(route.split(" ")[0], route.split(" ")[1].formatted(long_("slug")), "slug"));
        }
        for (String method : List.of("GET", "DELETE", "PATCH", "POST health", "POST refresh")) {
            for (String field : List.of("owner", "integration", "name")) {
                String owner = field.equals("owner") ? long_("owner") : "user";
                String integration = field.equals("integration") ? long_("integration") : KEPT;
                String name = field.equals("name") ? long_("name") : "alice";
                String path = "/api/connections/" + owner + "/" + integration + "/" + name
                        + (method.contains(" ") ? "/" + method.split(" ")[1] : "");
                probes.add(method.equals("PATCH") ? Probe.body("PATCH", path, field, Map.of("identityLabel", "x"))
                        : Probe.path(method.split(" ")[0], path, field));
            }
        }
        probes.add(Probe.path("POST", "/api/connections/user/" + KEPT + "/alice/health?ifStaleMs=" + long_("ifStaleMs"), "ifStaleMs"));
        for (String field : List.of("integration", "owner")) {
            probes.add(Probe.path("GET", "/api/connections?" + field + "=" + long_(field), field));
        }
        for (String field : List.of("integration", "owner", "connection", "query")) {
            probes.add(Probe.path("GET", "/api/tools?" + field + "=" + long_(field), field));
        }
        probes.add(Probe.path("GET", "/api/tools/schema?address=" + long_("address"), "address"));

        for (Probe p : probes) {
            Reply reply = api.send(p.method(), p.path(), p.body());
            String what = p.method() + " " + p.path().substring(0, Math.min(p.path().length(), 80)) + " field " + p.field();
            assertThat(reply.status()).as(what + ": " + reply).isEqualTo(400);
            assertThat(reply.message()).as(what).contains("`" + p.field().replace(" name", "") ).contains("at most");
        }
        assertThat(probes).hasSizeGreaterThan(60);
        assertThat(state()).as("nothing stored changed").isEqualTo(before);
    }

    @Test
    void theHundredThousandCharacterSlugOfTheReportIsA400() {
        Reply reply = api.post("/api/mcp/servers", Map.of("transport", "stdio", "name", "n", "slug", "a".repeat(100_000),
                "command", "node"));
        assertThat(reply.status()).as(reply.toString()).isEqualTo(400);
        assertThat(reply.message()).contains("`slug`").doesNotContain("aaaaaaaaaa");
    }

    @Test
    void wrongJsonTypesAreA400NamingTheField() {
        String before = state();
        refused("{\"transport\":\"stdio\",\"name\":5,\"command\":\"node\"}", "name");
        refused("{\"transport\":\"stdio\",\"name\":true,\"command\":\"node\"}", "name");
        refused("{\"transport\":\"stdio\",\"name\":\"typed\",\"command\":\"node\",\"args\":[1,2]}", "args");
        refused("{\"transport\":\"stdio\",\"name\":\"typed\",\"command\":\"node\",\"env\":{\"A\":1}}", "env");
        refused("{\"transport\":\"stdio\",\"name\":\"typed\",\"command\":1.5}", "command");
        refused("{\"name\":\"typed\",\"endpoint\":\"http://127.0.0.1:9/mcp\",\"headers\":{\"X\":false}}", "headers");
        Reply connection = api.post("/api/connections", "{\"owner\":\"user\",\"name\":\"n\",\"integration\":\"kept\","
                + "\"template\":\"T\",\"value\":12345}");
        assertThat(connection.status()).as(connection.toString()).isEqualTo(400);
        assertThat(connection.message()).contains("value");
        assertThat(state()).isEqualTo(before);
    }

    @Test
    void environmentNamesWithEqualsOrNulAndValuesWithNulAreRefusedAtRegistration() {
        String before = state();
        refused(stdioWithEnv("A=B", "v"), "env");
        refused(stdioWithEnv("A\u0000B", "v"), "env");
        refused(stdioWithEnv("A", "v\u0000w"), "env");
        Map<String, Object> nulArg = Map.of("transport", "stdio", "name", "typed", "command", "node", "args", List.of("a\u0000b"));
        Reply arg = api.post("/api/mcp/servers", nulArg);
        assertThat(arg.status()).as(arg.toString()).isEqualTo(400);
        Reply header = api.post("/api/mcp/servers", Map.of("name", "typed", "endpoint", "http://127.0.0.1:9/mcp",
                "headers", Map.of("X-Evil", "a\r\nInjected: 1")));
        assertThat(header.status()).as(header.toString()).isEqualTo(400);
        assertThat(header.message()).contains("headers");
        Reply credential = api.post("/api/connections", Map.of("owner", "user", "name", "nul", "integration", KEPT,
                "template", "T", "values", Map.of("BAD=NAME", "v")));
        assertThat(credential.status()).as(credential.toString()).isEqualTo(400);
        assertThat(state()).isEqualTo(before);
    }

    private void refused(Object body, String field) {
        Reply reply = api.post("/api/mcp/servers", body);
        assertThat(reply.status()).as(reply.toString()).isEqualTo(400);
        assertThat(reply.message()).as(reply.toString()).contains(field);
    }

    private static Map<String, Object> stdioWithEnv(String name, String value) {
        return Map.of("transport", "stdio", "name", "typed", "command", "node", "env", Map.of(name, value));
    }

    /** Everything the API shows of what is stored, including masked configs. */
    private String state() {
        StringBuilder state = new StringBuilder();
        state.append(api.get("/api/integrations").body());
        state.append(api.get("/api/connections").body());
        state.append(api.get("/api/mcp/servers/" + KEPT).body());
        return state.toString();
    }

    /** {@code values} with {@code field} one character over its bound; a list or map gets its element or value over. */
    private static Map<String, Object> over(Map<String, Object> values, String field) {
        Map<String, Object> changed = new LinkedHashMap<>(values);
        Object value = values.get(field);
        if (value instanceof List<?>) {
            changed.put(field, List.of(long_(field)));
        }
        else if (value instanceof Map<?, ?> map) {
            changed.put(field, Map.of(map.keySet().iterator().next(), long_(field)));
        }
        else {
            changed.put(field, long_(field));
        }
        return changed;
    }

    private static String long_(String field) {
        return "x".repeat(Bounds.of(field) + 1);
    }

    private record Probe(String method, String path, String field, Object body) {

        static Probe body(String method, String path, String field, Object body) {
            return new Probe(method, path, field, body);
        }

        static Probe path(String method, String path, String field) {
            return new Probe(method, path, field, method.equals("POST") ? "{}" : null);
        }
    }

}
