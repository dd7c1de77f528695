package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;

import dev.tether.api.ApiClient.Reply;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.KeycloakServer;
import dev.tether.testsupport.NodeClients;
import dev.tether.testsupport.SelfSignedTls;

/**
 * Issue 26's OAuth acceptance against a real authorization server that takes Client ID Metadata Documents: Keycloak
 * with its {@code cimd} feature, a realm whose client policy treats an https {@code client_id} on {@code localhost}
 * as a document to fetch, and which sends {@code iss} with its authorization responses (RFC 9207). Tether runs with
 * TLS on loopback (a certificate this test makes, which Keycloak is told to trust) and {@code tether.oauth.public-base-url}
 * on it. In front of Keycloak sits a remote MCP server written with the TypeScript SDK v2
 * ({@code src/test/clients/mcp-oauth-server.mjs}) that checks Keycloak's tokens and answers {@code 403 insufficient_scope}
 * when a tool needs a scope the token lacks.
 *
 * <p>The walk is the web UI's (probe, register, start, the browser through Keycloak's login page, the callback), and
 * Keycloak is the judge of what Tether did: its access log shows no request to its registration endpoint, and the
 * token it issued names Tether's document as the client.
 */
@InProcess
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.DEFINED_PORT,
        properties = { "tether.api.token=" + ClientIdMetadataDocumentTest.TOKEN, "tether.docker.reap-interval=1h",
                "tether.oauth.timeout=60s" })
@DirtiesContext
class ClientIdMetadataDocumentTest {

    static final String TOKEN = "cimd-test-token";
    private static final Duration BOUND = Duration.ofSeconds(120);
    private static final String REALM = "tether";

    @TempDir
    static Path work;

    private static SelfSignedTls tls;
    private static int port;
    private static KeycloakServer keycloak;
    private static NodeClients.Run mcp;
    private static String mcpUrl;

    @BeforeAll
    static void servers() throws Exception {
        tls = SelfSignedTls.in(work);
        port = Fixture.freeLoopbackPort();
        keycloak = KeycloakServer.start(tls.certificatePem(), work.resolve("keycloak.log"));
        keycloak.createRealm(Files.readString(Fixture.projectRoot().resolve("src/test/keycloak/tether-realm.json")));
        mcp = NodeClients.run("mcp-oauth-server.mjs", List.of(keycloak.issuer(REALM)));
        int mcpPort = ApiClient.JSON.readTree(mcp.awaitLine(line -> line.contains("listening"), BOUND)).path("listening").asInt();
        mcpUrl = "http://127.0.0.1:" + mcpPort + "/mcp";
    }

    @DynamicPropertySource
    static void tetherOnTls(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", () -> work.resolve("tether").toString());
        registry.add("server.port", () -> port);
        registry.add("server.ssl.enabled", () -> "true");
        registry.add("server.ssl.key-store", () -> tls.keyStore().toString());
        registry.add("server.ssl.key-store-type", () -> "PKCS12");
        registry.add("server.ssl.key-store-password", () -> tls.password());
        registry.add("tether.oauth.public-base-url", () -> base());
    }

    @AfterAll
    static void stopServers() {
        if (mcp != null) {
            mcp.close();
        }
        if (keycloak != null) {
            keycloak.close();
        }
    }

    private static String base() {
        return "https://localhost:" + port;
    }

    private final ApiClient api = new ApiClient(base(), HttpClient.newBuilder().sslContext(tls.sslContext()), TOKEN);
    private final KeycloakBrowser browser = new KeycloakBrowser();

    @Test
    void tetherGoesByItsDocumentWithoutRegisteringChecksIssAndAsksForMoreScopeWhenTheServerWantsIt() throws Exception {
        String document = base() + "/api/oauth/client-metadata.json";

        // the document, without a token, as Keycloak fetches it
        Reply published = new ApiClient(base(), HttpClient.newBuilder().sslContext(tls.sslContext()), null)
                .get("/api/oauth/client-metadata.json");
        assertThat(published.status()).as(published.toString()).isEqualTo(200);
        JsonNode metadata = published.json();
        assertThat(metadata.path("client_id").asString()).isEqualTo(document);
        assertThat(metadata.path("redirect_uris").valueStream().map(JsonNode::asString)).containsExactly(base() + "/api/oauth/callback");
        assertThat(metadata.path("token_endpoint_auth_method").asString()).isEqualTo("none");
        assertThat(published.header("cache-control").orElse("")).contains("max-age=3600");

        // the web UI's steps: add the server, probe it, register where the probe says, start
        Reply added = api.post("/api/mcp/servers", Map.of("name", "Notes", "endpoint", mcpUrl, "remoteTransport", "streamable-http"));
        assertThat(added.status()).as(added.toString()).isEqualTo(200);
        String slug = added.json().path("slug").asString();
        JsonNode serverProbe = api.post("/api/mcp/probe", Map.of("endpoint", mcpUrl)).json();
        assertThat(serverProbe.path("requiresOAuth").asBoolean()).as(serverProbe.toString()).isTrue();
        assertThat(serverProbe.path("supportsDynamicRegistration").asBoolean()).isTrue();
        JsonNode probe = api.post("/api/oauth/probe", Map.of("url", mcpUrl)).json();
        assertThat(probe.path("authorizationUrl").asString()).as(probe.toString())
                .isEqualTo(keycloak.issuer(REALM) + "/protocol/openid-connect/auth");
        assertThat(probe.path("registrationEndpoint").asString()).as("Keycloak takes documents: register by Tether's own")
                .isEqualTo(document);

        Map<String, Object> registration = new LinkedHashMap<>();
        registration.put("owner", "user");
        registration.put("slug", "notes-app");
        registration.put("registrationEndpoint", probe.path("registrationEndpoint").asString());
        registration.put("authorizationUrl", probe.path("authorizationUrl").asString());
        registration.put("tokenUrl", probe.path("tokenUrl").asString());
        registration.put("resource", probe.path("resource").asString());
        registration.put("scopes", List.of());
        registration.put("clientName", "Notes");
        registration.put("originIntegration", slug);
        Reply registered = api.post("/api/oauth/clients/register-dynamic", registration);
        assertThat(registered.status()).as(registered.toString()).isEqualTo(200);
        JsonNode client = api.get("/api/oauth/clients").json().valueStream()
                .filter(c -> c.path("slug").asString().equals("notes-app")).findFirst().orElseThrow();
        assertThat(client.path("clientId").asString()).isEqualTo(document);
        assertThat(client.path("origin").path("kind").asString()).isEqualTo("dynamic_client_registration");

        URI back = authorize(slug, "main");
        assertThat(query(back, "iss")).as("Keycloak names itself in its response").isEqualTo(keycloak.issuer(REALM));
        HttpResponse<String> page = browser.get(back);
        assertThat(page.body()).as(page.body()).contains("\"ok\":true");

        assertThat(call(slug, "whoami", "{}")).contains("token of " + document + " with scope");
        assertThat(keycloak.requests()).as("Keycloak's access log: no registration request, ever")
                .noneMatch(request -> request.contains("/clients-registrations/"))
                .anyMatch(request -> request.startsWith("POST /realms/" + REALM + "/protocol/openid-connect/token"));
        assertThat(keycloak.admin("/admin/realms/" + REALM + "/clients?clientId=" + encode(document)).size())
                .as("Keycloak made its client from the document").isEqualTo(1);
        // Keycloak records the client it made from the document as registered; nothing else was, and nothing failed to be
        assertThat(keycloak.admin("/admin/realms/" + REALM + "/events?type=CLIENT_REGISTER&type=CLIENT_REGISTER_ERROR").valueStream()
                .map(event -> event.path("type").asString() + " " + event.path("clientId").asString()))
                .containsExactly("CLIENT_REGISTER " + document);

        // RFC 9207: a response naming another issuer, or none from a server that promised one, spends the flow
        URI mixed = authorize(slug, "mixed");
        assertThat(browser.get(URI.create(mixed.toString().replace(encode(keycloak.issuer(REALM)), encode("https://attacker.example")))).body())
                .contains("\"ok\":false").contains("came from issuer https://attacker.example, but the authorization request went to "
                        + keycloak.issuer(REALM) + " (RFC 9207)");
        URI stripped = authorize(slug, "stripped");
        assertThat(browser.get(URI.create(stripped.toString().replaceAll("&iss=[^&]*", ""))).body())
                .contains("\"ok\":false").contains("carries no iss, though " + keycloak.issuer(REALM) + " sends it");
        assertThat(api.get("/api/connections/user/" + slug + "/mixed").status()).isEqualTo(404);
        assertThat(api.get("/api/connections/user/" + slug + "/stripped").status()).isEqualTo(404);

        // step-up: the server wants notes:write, which the token lacks; the next authorization asks for both
        String refused = call(slug, "write_note", "{ text: \"hello\" }");
        assertThat(refused).contains("insufficient_scope").contains("mcp:tools notes:write").doesNotContain("noted");
        assertThat(call(slug, "whoami", "{}")).as("other calls go on with the token as it is").contains("token of " + document);
        String granted = api.get("/api/connections/user/" + slug + "/main").json().path("oauthScope").asString();
        assertThat(granted).doesNotContain("notes:write");

        JsonNode again = api.post("/api/oauth/start", start(slug, "main")).json();
        assertThat(query(URI.create(again.path("authorizationUrl").asString()), "scope")).as(again.toString())
                .isEqualTo("mcp:tools notes:write");
        assertThat(browser.get(browser.login(URI.create(again.path("authorizationUrl").asString()))).body()).contains("\"ok\":true");
        assertThat(api.get("/api/connections/user/" + slug + "/main").json().path("oauthScope").asString()).contains("notes:write");
        assertThat(call(slug, "write_note", "{ text: \"hello\" }")).contains("noted: hello");

        List<String> served = mcp.printed();
        assertThat(served).as("the server refused one write for want of scope, then took one")
                .filteredOn(line -> line.contains("\"status\":403")).hasSize(1);
        assertThat(served).as("discovery says the revision a connection opens with")
                .anyMatch(line -> line.contains("oauth-protected-resource") && line.contains("\"version\":\"2026-07-28\""));
    }

    /** Starts a flow for connection {@code name} and walks the browser through Keycloak to the redirect back to Tether. */
    private URI authorize(String integration, String name) {
        Reply started = api.post("/api/oauth/start", start(integration, name));
        assertThat(started.status()).as(started.toString()).isEqualTo(200);
        URI authorization = URI.create(started.json().path("authorizationUrl").asString());
        assertThat(query(authorization, "client_id")).isEqualTo(base() + "/api/oauth/client-metadata.json");
        assertThat(query(authorization, "redirect_uri")).isEqualTo(base() + "/api/oauth/callback");
        URI back = browser.login(authorization);
        assertThat(back.toString()).startsWith(base() + "/api/oauth/callback?");
        return back;
    }

    private static Map<String, Object> start(String integration, String name) {
        return OAuthFlowTest.start("notes-app", integration, name);
    }

    private String call(String integration, String tool, String arguments) {
        Reply reply = api.post("/api/executions", Map.of("code", "return await tools." + integration + ".user.main." + tool + "(" + arguments + ")"));
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        return reply.body();
    }

    private static String query(URI uri, String name) {
        for (String pair : uri.getRawQuery().split("&")) {
            if (pair.startsWith(name + "=")) {
                return URLDecoder.decode(pair.substring(name.length() + 1), StandardCharsets.UTF_8);
            }
        }
        throw new AssertionError(uri + " has no " + name);
    }

    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    /**
     * A user's browser at Keycloak: its cookies kept (so a second authorization rides the first one's sign-in), its
     * login form filled in, redirects not followed so the test sees where each points; it trusts Tether's certificate.
     * Keycloak marks its cookies {@code Secure} and {@code SameSite=None}, which a browser still sends to a loopback
     * origin and {@link java.net.CookieManager} does not over http: the jar here keeps them by name, for Keycloak only.
     */
    private static final class KeycloakBrowser {

        private static final Pattern FORM_ACTION = Pattern.compile("<form[^>]*action=\"([^\"]+)\"");
        private static final Pattern HIDDEN = Pattern.compile("<input[^>]*type=\"hidden\"[^>]*name=\"([^\"]+)\"[^>]*value=\"([^\"]*)\"");

        private final HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER)
                .sslContext(tls.sslContext()).connectTimeout(Duration.ofSeconds(10)).build();
        private final Map<String, String> cookies = new LinkedHashMap<>();

        /**
         * Follows an authorization URL through Keycloak to where it sends the browser back: signs alice in on its login
         * page, and grants on its consent page (a client Keycloak made from a document needs the user's consent).
         */
        URI login(URI authorization) {
            HttpResponse<String> answer = get(authorization);
            for (int step = 0; step < 6; step++) {
                if (answer.statusCode() == 200) {
                    Matcher action = FORM_ACTION.matcher(answer.body());
                    assertThat(action.find()).as("a Keycloak page with a form: %s", answer.body()).isTrue();
                    URI target = answer.uri().resolve(action.group(1).replace("&amp;", "&"));
                    answer = answer.body().contains("name=\"username\"") ? post(target, "username=alice&password=alice-password")
                            : post(target, hiddenFields(answer.body()) + "accept=Yes");
                    continue;
                }
                assertThat(answer.statusCode()).as("Keycloak answered %s", answer.body()).isBetween(300, 399);
                URI next = answer.uri().resolve(answer.headers().firstValue("location").orElseThrow());
                if (!next.toString().startsWith(ClientIdMetadataDocumentTest.keycloak.origin())) {
                    return next;
                }
                answer = get(next);
            }
            throw new AssertionError("Keycloak did not send the browser back within six steps; last: " + answer.body());
        }

        private static String hiddenFields(String page) {
            StringBuilder form = new StringBuilder();
            Matcher hidden = HIDDEN.matcher(page);
            while (hidden.find()) {
                form.append(encode(hidden.group(1))).append('=').append(encode(hidden.group(2).replace("&amp;", "&"))).append('&');
            }
            return form.toString();
        }

        HttpResponse<String> get(URI uri) {
            return send(HttpRequest.newBuilder(uri).GET());
        }

        private HttpResponse<String> post(URI uri, String form) {
            return send(HttpRequest.newBuilder(uri).header("Content-Type", "application/x-www-form-urlencoded")
                    .POST(HttpRequest.BodyPublishers.ofString(form)));
        }

        private HttpResponse<String> send(HttpRequest.Builder request) {
            try {
                HttpRequest built = request.timeout(BOUND).build();
                boolean keycloak = built.uri().toString().startsWith(ClientIdMetadataDocumentTest.keycloak.origin());
                if (keycloak && !cookies.isEmpty()) {
                    built = HttpRequest.newBuilder(built, (name, value) -> true).header("Cookie", String.join("; ",
                            cookies.entrySet().stream().map(cookie -> cookie.getKey() + "=" + cookie.getValue()).toList())).build();
                }
                HttpResponse<String> answer = http.send(built, HttpResponse.BodyHandlers.ofString());
                if (keycloak) {
                    for (String set : answer.headers().allValues("set-cookie")) {
                        String pair = set.split(";", 2)[0];
                        int equals = pair.indexOf('=');
                        if (equals > 0) {
                            String value = pair.substring(equals + 1);
                            if (value.isEmpty() || set.toLowerCase(java.util.Locale.ROOT).contains("max-age=0")) {
                                cookies.remove(pair.substring(0, equals));
                            }
                            else {
                                cookies.put(pair.substring(0, equals), value);
                            }
                        }
                    }
                }
                return answer;
            }
            catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(ex);
            }
        }
    }
}
