package dev.tether.bench;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.PackagedDaemon;

/**
 * What every benchmark does to a packaged daemon before it measures: JSON requests over one keep-alive HTTP/1.1
 * client, and stdio servers registered the way Executor's app does it (the server, then its connection). Its
 * address is the daemon's, or a load balancer's in front of replicas that share a token.
 */
final class BenchClient {

    static final JsonMapper JSON = JsonMapper.builder().build();

    private final String url;
    private final String token;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    BenchClient(PackagedDaemon daemon) {
        this(daemon.url(), daemon.token());
    }

    BenchClient(String url, String token) {
        this.url = url;
        this.token = token;
    }

    HttpClient http() {
        return http;
    }

    /** A request to {@code path} with the token and a JSON body type, bounded at a minute. */
    HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create(url + path))
                .header("Authorization", "Bearer " + token)
                .header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(60));
    }

    /** Sends a request; anything but a 2xx fails the benchmark, naming the route and the answer. A text answer comes as a string node. */
    JsonNode send(String method, String path, Object body) throws Exception {
        HttpResponse<String> response = exchange(method, path, body, HttpResponse.BodyHandlers.ofString());
        String answer = response.body();
        boolean json = response.headers().firstValue("Content-Type").filter(type -> type.contains("json")).isPresent();
        return answer.isEmpty() ? JSON.nullNode() : json ? JSON.readTree(answer) : JSON.getNodeFactory().stringNode(answer);
    }

    /** A GET's answer as it came, unparsed: what the daemon and the wire cost, apart from the client's own parse. */
    byte[] get(String path) throws Exception {
        return exchange("GET", path, null, HttpResponse.BodyHandlers.ofByteArray()).body();
    }

    private <T> HttpResponse<T> exchange(String method, String path, Object body, HttpResponse.BodyHandler<T> answer) throws Exception {
        HttpRequest request = request(path)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)))
                .build();
        HttpResponse<T> response = http.send(request, answer);
        if (response.statusCode() / 100 != 2) {
            throw new IllegalStateException(method + " " + path + ": " + response.statusCode() + " " + response.body());
        }
        return response;
    }

    JsonNode post(String path, Object body) throws Exception {
        return send("POST", path, body);
    }

    /** Registers a stdio server as {@code slug} with its connection {@code org/<slug>/default}. */
    void addStdioServer(String slug, List<String> command) throws Exception {
        post("/api/mcp/servers", Map.of("transport", "stdio", "name", slug, "slug", slug,
                "command", command.get(0), "args", command.subList(1, command.size())));
        post("/api/connections", Map.of("owner", "org", "name", "default", "integration", slug, "template", "none",
                "values", Map.of()));
    }

    /** The fixture's own tools; {@code --tools=N} adds N generated ones, {@code tool_0} to {@code tool_<N-1>}. */
    static final int FIXTURE_TOOLS = 5;

    /**
     * Registers and syncs {@code connections} fixture servers {@code bench_<i>} of {@code tools} tools each, the
     * large stored catalog several benchmarks measure against; their slugs.
     */
    List<String> addFixtureServers(int connections, int tools) throws Exception {
        List<String> command = Fixture.command("--tools=" + (tools - FIXTURE_TOOLS));
        List<String> slugs = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            String slug = "bench_" + i;
            addStdioServer(slug, command);
            int synced = refresh(slug).size();
            if (synced != tools) {
                throw new IllegalStateException(slug + " synced " + synced + " tools, not " + tools);
            }
            slugs.add(slug);
        }
        return slugs;
    }

    /** Syncs the catalog of {@code org/<slug>/default}; the tools it found. */
    JsonNode refresh(String slug) throws Exception {
        return post("/api/connections/org/" + slug + "/default/refresh", null);
    }
}
