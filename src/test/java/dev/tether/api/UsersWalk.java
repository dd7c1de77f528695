package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import tools.jackson.databind.JsonNode;

import dev.tether.testsupport.Fixture;

/**
 * The users' acceptance walk, the same in token mode and with a real OIDC provider: user A builds a world of her own
 * (a personal connection with a secret, a personal OAuth app with a secret, a policy, an OAuth flow in flight, paused
 * executions over the API and over {@code /mcp}, an API token), then user B walks every route the daemon documents,
 * {@code /mcp}, {@code /mcp/tools} and the legacy {@code /sse}, each aimed at A's ids. What B gets back is kept, so that
 * the test can check it names no secret and no mark of A's, that what targets A's rows is a 404 or a 403, and that A's
 * world is as she left it.
 */
final class UsersWalk {

    static final String INTEGRATION = "walk";
    static final String A_CONNECTION = "aliceconn";
    static final String A_CLIENT = "alice_app";
    /** Marks of A's that B never sends: none may appear in anything B is answered. */
    static final String A_LABEL = "alice-label-mark";
    static final String A_CLIENT_ID = "alice-client-id-mark";
    static final String A_PATTERN = "walk.user.aliceconn.tool_1";
    static final String A_CODE_MARK = "alice-code-mark";
    static final String A_TOKEN_NAME = "alice-token-mark";

    private static final Duration STREAM_READ = Duration.ofMillis(500);
    private static final Duration STREAM_HEADERS = Duration.ofSeconds(3);
    /** The status of an event stream that sent nothing, not even its headers, while the walk waited. */
    static final int OPEN_STREAM = -1;
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    /** A caller of the daemon: one bearer credential. */
    record Caller(String name, int port, String bearer) {

        ApiClient api() {
            return new ApiClient(port, bearer);
        }
    }

    /** One answer B got, with what B asked. */
    record Answer(String method, String path, int status, String body, Map<String, List<String>> headers) {

        /** Everything it says: its body and its headers. */
        String said() {
            return body + " " + headers;
        }

        @Override
        public String toString() {
            return method + " " + path + " -> " + status + " " + (body.length() > 300 ? body.substring(0, 300) + "…" : body);
        }
    }

    /** A's world: her ids and the secrets stored for her. */
    record World(String aToken, String aTokenId, String executionId, String mcpSession, String mcpExecutionId, String policyId,
            String oauthState, String aSecret, String orgSecret, String clientSecret) {

        Set<String> secrets() {
            return new LinkedHashSet<>(List.of(aToken, aSecret, orgSecret, clientSecret, sha256(aSecret)));
        }
    }

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();
    private final int port;

    UsersWalk(int port) {
        this.port = port;
    }

    /**
     * Builds A's world: {@code admin} registers the fixture server (with its {@code env} tool) and an org connection;
     * {@code a} (whose API token is made here, by {@code a}'s own credential) makes everything else.
     */
    World build(Caller admin, Caller a) throws Exception {
        String orgSecret = "org-secret-" + System.nanoTime();
        String aSecret = "alice-secret-" + System.nanoTime();
        String clientSecret = "alice-client-secret-" + System.nanoTime();
        List<String> command = Fixture.command("--env-tool");
        Map<String, Object> server = new LinkedHashMap<>();
        server.put("transport", "stdio");
        server.put("name", "Walk");
        server.put("slug", INTEGRATION);
        server.put("command", command.get(0));
        server.put("args", command.subList(1, command.size()));
        ok(admin.api().post("/api/mcp/servers", server));
        ok(admin.api().post("/api/connections", Map.of("owner", "org", "name", "shared", "integration", INTEGRATION,
                "template", "none", "values", Map.of("WALK_SECRET", orgSecret))));

        ApiClient alice = a.api();
        ok(alice.post("/api/connections", Map.of("owner", "user", "name", A_CONNECTION, "integration", INTEGRATION, "template", "none",
                "identityLabel", A_LABEL, "values", Map.of("WALK_SECRET", aSecret))));
        ok(alice.post("/api/oauth/clients", Map.of("owner", "user", "slug", A_CLIENT, "authorizationUrl", "http://127.0.0.1:9/authorize",
                "tokenUrl", "http://127.0.0.1:9/token", "grant", "authorization_code", "clientId", A_CLIENT_ID, "clientSecret", clientSecret)));
        String policyId = ok(alice.post("/api/policies", Map.of("owner", "user", "pattern", A_PATTERN, "action", "block")))
                .json().path("id").asString();
        String state = ok(alice.post("/api/oauth/start", Map.of("client", A_CLIENT, "clientOwner", "user", "owner", "user",
                "name", "aliceOauth", "integration", INTEGRATION, "template", "oauth2", "redirectUri", "http://127.0.0.1:9/back")))
                .json().path("state").asString();
        JsonNode issued = ok(alice.post("/api/tokens", Map.of("name", A_TOKEN_NAME, "role", "member"))).json();
        String aToken = issued.path("token").asString();
        String aTokenId = issued.path("tokenInfo").path("id").asString();

        // A paused execution: the fixture's destructive tool waits for approval.
        JsonNode paused = ok(alice.post("/api/executions", Map.of("code",
                "// " + A_CODE_MARK + "\nreturn await tools.walk.user.aliceconn.delete_everything({})"))).json();
        assertThat(paused.path("status").asString()).as(paused.toString()).isEqualTo("paused");
        String executionId = paused.path("structured").path("executionId").asString();
        assertThat(executionId).startsWith("exec_");

        // An agent of A's on /mcp: a session, and an execution of its own paused there.
        McpSession session = McpSession.open(this, "/mcp", a.bearer());
        JsonNode agentPause = session.call("execute", Map.of("code", "// " + A_CODE_MARK
                + "\nreturn await tools.walk.user.aliceconn.delete_everything({})"));
        String mcpExecutionId = agentPause.path("result").path("structuredContent").path("executionId").asString();
        assertThat(mcpExecutionId).as(agentPause.toString()).startsWith("exec_");
        return new World(aToken, aTokenId, executionId, session.id(), mcpExecutionId, policyId, state, aSecret, orgSecret, clientSecret);
    }

    /**
     * B's walk: every documented route (from {@code /api/docs}) with its variables set to A's ids and a body that names
     * A's rows, then the agent endpoints with A's session and executions. Answers in the order sent.
     */
    List<Answer> walk(Caller b, World world, List<String[]> routes) throws Exception {
        List<Answer> answers = new ArrayList<>();
        for (String[] route : routes) {
            String path = aimed(route[1], world);
            Object body = route[0].equals("GET") ? null : body(world);
            answers.add(send(route[0], path, body, b.bearer(), path.endsWith("/events") ? Map.of("Accept", "text/event-stream") : Map.of()));
        }
        answers.addAll(agents(b, world));
        return answers;
    }

    /** The routes {@code /api/docs} documents, but the two that need no credentials, as {@code [method, path]}. */
    static List<String[]> documented(ApiClient any) {
        JsonNode paths = ok(any.get("/api/docs")).json().path("paths");
        List<String[]> routes = new ArrayList<>();
        for (String path : paths.propertyNames()) {
            for (String method : paths.path(path).propertyNames()) {
                routes.add(new String[] { method.toUpperCase(), path });
            }
        }
        return routes;
    }

    /**
     * Whether a route asks for no credentials: liveness, where a browser comes back from an OAuth server, Tether's OAuth
     * client metadata document, where signing in begins and ends, and the agents' protected resource metadata.
     */
    static boolean open(String path) {
        return path.equals("/api/health") || path.startsWith("/api/oauth/callback") || path.startsWith("/api/oauth/await/")
                || path.equals("/api/oauth/client-metadata.json") || path.startsWith("/api/auth/login") || path.startsWith("/api/auth/callback") || path.startsWith("/.well-known/");
    }

    /** A documented path aimed at A's rows. */
    static String aimed(String path, World world) {
        String slug = path.startsWith("/api/oauth/clients") ? A_CLIENT : INTEGRATION;
        String session = path.startsWith("/api/oauth/await") ? world.oauthState() : world.mcpSession();
        String id = path.startsWith("/api/tokens") ? world.aTokenId() : "q1";
        return path.replace("{owner}", "user").replace("{integration}", INTEGRATION).replace("{name}", A_CONNECTION)
                .replace("{slug}", slug).replace("{executionId}", path.startsWith("/api/mcp-sessions") ? world.mcpExecutionId()
                        : world.executionId())
                .replace("{policyId}", world.policyId()).replace("{sessionId}", session).replace("{key}", "executor")
                .replace("{id}", id);
    }

    /** One body for every route, naming A's rows wherever a route reads a name. */
    static Map<String, Object> body(World world) {
        Map<String, Object> body = new TreeMap<>();
        body.put("owner", "user");
        body.put("integration", INTEGRATION);
        body.put("name", A_CONNECTION);
        body.put("slug", A_CLIENT);
        body.put("client", A_CLIENT);
        body.put("clientOwner", "user");
        body.put("template", "none");
        body.put("state", world.oauthState());
        body.put("code", "return await tools.walk.user.aliceconn.env({name: 'WALK_SECRET'})");
        body.put("action", "accept");
        body.put("address", "tools.walk.user.aliceconn.env");
        body.put("args", Map.of("name", "WALK_SECRET"));
        body.put("pattern", "*");
        body.put("id", world.policyId());
        body.put("executionId", world.executionId());
        body.put("url", "http://127.0.0.1:9/nothing");
        return body;
    }

    /** {@code /mcp}, {@code /mcp/tools} and {@code /sse} as B, aimed at A's session and executions. */
    private List<Answer> agents(Caller b, World world) throws Exception {
        List<Answer> answers = new ArrayList<>();
        McpSession own = McpSession.open(this, "/mcp", b.bearer());
        answers.add(own.raw("tools/list", Map.of()));
        answers.add(own.raw("tools/call", Map.of("name", "execute", "arguments", Map.of("code",
                "return await tools.walk.user.aliceconn.env({name: 'WALK_SECRET'})"))));
        answers.add(own.raw("tools/call", Map.of("name", "resume", "arguments", Map.of("executionId", world.mcpExecutionId(),
                "action", "accept"))));
        answers.add(own.raw("tools/call", Map.of("name", "resume", "arguments", Map.of("executionId", world.executionId(),
                "action", "accept"))));
        Map<String, String> theirs = Map.of("Mcp-Session-Id", world.mcpSession(), "Accept", "application/json, text/event-stream");
        answers.add(send("POST", "/mcp", McpSession.request(9, "tools/call", Map.of("name", "resume", "arguments",
                Map.of("executionId", world.mcpExecutionId(), "action", "accept"))), b.bearer(), theirs));
        answers.add(send("GET", "/mcp", null, b.bearer(), Map.of("Mcp-Session-Id", world.mcpSession(), "Accept", "text/event-stream")));
        answers.add(send("DELETE", "/mcp", null, b.bearer(), Map.of("Mcp-Session-Id", world.mcpSession())));

        McpSession tools = McpSession.open(this, "/mcp/tools", b.bearer());
        answers.add(tools.raw("tools/list", Map.of()));
        answers.add(tools.raw("tools/call", Map.of("name", "tools.walk.user.aliceconn.env", "arguments", Map.of("name", "WALK_SECRET"))));
        answers.add(send("POST", "/mcp/tools", McpSession.notification("notifications/cancelled", Map.of("requestId", 1)), b.bearer(),
                Map.of("Mcp-Session-Id", world.mcpSession())));
        answers.add(send("GET", "/mcp/tools", null, b.bearer(), Map.of("Mcp-Session-Id", world.mcpSession(), "Accept", "text/event-stream")));
        answers.add(send("DELETE", "/mcp/tools", null, b.bearer(), Map.of("Mcp-Session-Id", world.mcpSession())));
        answers.add(send("POST", "/messages?sessionId=" + world.mcpSession(), McpSession.request(1, "tools/list", Map.of()), b.bearer(),
                Map.of()));
        answers.add(send("GET", "/sse", null, b.bearer(), Map.of("Accept", "text/event-stream")));
        return answers;
    }

    /**
     * Sends one request; an event stream is read for {@value #STREAM_READ_MS} ms (what it says at once: a stream of B's
     * must say nothing of A's) and closed.
     */
    Answer send(String method, String path, Object body, String bearer, Map<String, String> headers) throws Exception {
        HttpRequest.BodyPublisher publisher = body == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(body instanceof String text ? text : ApiClient.JSON.writeValueAsString(body));
        // A stream that has nothing to say sends no headers either: bounded, it is an open stream that said nothing.
        boolean streamed = "text/event-stream".equals(headers.get("Accept"));
        Duration timeout = streamed ? STREAM_HEADERS : TIMEOUT;
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(timeout)
                .method(method, publisher).header("Authorization", "Bearer " + bearer);
        if (body != null) {
            request.header("Content-Type", "application/json");
        }
        if (path.startsWith("/mcp") && !headers.containsKey("Accept")) {
            request.header("Accept", "application/json, text/event-stream");
        }
        headers.forEach(request::header);
        HttpResponse<InputStream> response;
        try {
            response = http.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        }
        catch (java.net.http.HttpTimeoutException silent) {
            return new Answer(method, path, streamed ? OPEN_STREAM : 0, "no answer within " + timeout, Map.of());
        }
        String text;
        try (InputStream in = response.body()) {
            boolean stream = response.headers().firstValue("content-type").orElse("").startsWith("text/event-stream");
            text = stream ? readFor(in) : new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        return new Answer(method, path, response.statusCode(), text, response.headers().map());
    }

    static final long STREAM_READ_MS = 500;

    /** What a stream says within {@link #STREAM_READ}, read on another thread so that this one can stop waiting. */
    private static String readFor(InputStream in) throws Exception {
        StringBuilder read = new StringBuilder();
        CompletableFuture<Void> reading = CompletableFuture.runAsync(() -> {
            byte[] chunk = new byte[4096];
            try {
                int n;
                while ((n = in.read(chunk)) > 0) {
                    synchronized (read) {
                        read.append(new String(chunk, 0, n, StandardCharsets.UTF_8));
                    }
                }
            }
            catch (IOException closed) {
                // closed below: what was read is the answer
            }
        });
        try {
            reading.get(STREAM_READ.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (java.util.concurrent.TimeoutException stillOpen) {
            // an open stream: what it said so far
        }
        synchronized (read) {
            return read.toString();
        }
    }

    static ApiClient.Reply ok(ApiClient.Reply reply) {
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        return reply;
    }

    static String sha256(String value) {
        try {
            return "sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8)));
        }
        catch (NoSuchAlgorithmException impossible) {
            throw new IllegalStateException(impossible);
        }
    }

    /** An MCP session over streamable HTTP, spoken by hand: JSON answers, one request at a time. */
    static final class McpSession {

        private final UsersWalk walk;
        private final String path;
        private final String bearer;
        private final String id;
        private int ids = 1;

        private McpSession(UsersWalk walk, String path, String bearer, String id) {
            this.walk = walk;
            this.path = path;
            this.bearer = bearer;
            this.id = id;
        }

        static McpSession open(UsersWalk walk, String path, String bearer) throws Exception {
            Answer initialized = walk.send("POST", path, request(0, "initialize", Map.of("protocolVersion", "2025-06-18",
                    "capabilities", Map.of(), "clientInfo", Map.of("name", "walk", "version", "1"))), bearer, Map.of());
            assertThat(initialized.status()).as(initialized.toString()).isEqualTo(200);
            String session = initialized.headers().entrySet().stream().filter(h -> h.getKey().equalsIgnoreCase("mcp-session-id"))
                    .map(h -> h.getValue().get(0)).findFirst().orElseThrow(() -> new AssertionError("no session: " + initialized));
            McpSession opened = new McpSession(walk, path, bearer, session);
            walk.send("POST", path, notification("notifications/initialized", Map.of()), bearer, Map.of("Mcp-Session-Id", session));
            return opened;
        }

        String id() {
            return id;
        }

        Answer raw(String method, Object params) throws Exception {
            return walk.send("POST", path, request(ids++, method, params), bearer, Map.of("Mcp-Session-Id", id));
        }

        /** Calls a tool and answers the JSON-RPC response. */
        JsonNode call(String tool, Map<String, Object> arguments) throws Exception {
            Answer answer = raw("tools/call", Map.of("name", tool, "arguments", arguments));
            assertThat(answer.status()).as(answer.toString()).isEqualTo(200);
            return ApiClient.JSON.readTree(answer.body());
        }

        static String request(int id, String method, Object params) {
            return ApiClient.JSON.writeValueAsString(Map.of("jsonrpc", "2.0", "id", id, "method", method, "params", params));
        }

        static String notification(String method, Object params) {
            return ApiClient.JSON.writeValueAsString(Map.of("jsonrpc", "2.0", "method", method, "params", params));
        }
    }
}
