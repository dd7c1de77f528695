package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;

import dev.tether.api.ApiClient.Reply;
import dev.tether.testsupport.ProxiedOAuthExample;
import dev.tether.testsupport.ProtectedApi;

/**
 * An OpenAPI source with an {@code oauth2} method, connected through the OAuth flow against the TypeScript SDK's
 * example authorization server: its calls carry the bearer token, which the API checks by introspection at that
 * server. Refused with 401 before its expiry, the token is renewed once (counted on the proxy in front of the token
 * endpoint) and the call made once more; refused again, the call answers {@code connection_rejected} after that one
 * retry.
 */
@InProcess
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "tether.api.token=" + OAuthSourcesTest.TOKEN, "tether.docker.reap-interval=1h" })
@DirtiesContext
class OAuthSourcesTest {

    static final String TOKEN = "oauth-sources-test-token";

    @TempDir
    static Path dataDir;

    private static ProxiedOAuthExample oauth;

    @LocalServerPort
    int port;

    private final Browser browser = new Browser();

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", () -> dataDir.toString());
    }

    @BeforeAll
    static void servers() {
        oauth = ProxiedOAuthExample.start(dataDir.resolve("oauth-example.log"));
    }

    @AfterAll
    static void stopServers() {
        if (oauth != null) {
            oauth.close();
        }
    }

    @Test
    void anOpenApiSourceSendsTheTokenAndRenewsItOnceWhenRefused() {
        ApiClient tether = new ApiClient(port, TOKEN);
        try (ProtectedApi api = ProtectedApi.checkingWith(URI.create(oauth.example().authorizationServer() + "/introspect"))) {
            Reply added = tether.post("/api/openapi/specs", Map.of("spec", Map.of("kind", "url", "url", api.baseUrl() + "/openapi.json"),
                    "slug", "protected", "authenticationTemplate", List.of(Map.of("slug", "oauth", "kind", "oauth2",
                            "authorizationUrl", oauth.example().authorizationServer() + "/authorize", "tokenUrl", oauth.proxy().url("/token"),
                            "scopes", List.of()))));
            assertThat(added.status()).as(added.toString()).isEqualTo(200);
            Map<String, Object> registration = new LinkedHashMap<>();
            registration.put("owner", "user");
            registration.put("slug", "protected-api");
            registration.put("registrationEndpoint", oauth.example().authorizationServer() + "/register");
            registration.put("authorizationUrl", oauth.example().authorizationServer() + "/authorize");
            registration.put("tokenUrl", oauth.proxy().url("/token"));
            registration.put("resource", oauth.example().mcpUrl());
            registration.put("scopes", List.of());
            Reply registered = tether.post("/api/oauth/clients/register-dynamic", registration);
            assertThat(registered.status()).as(registered.toString()).isEqualTo(200);
            Reply started = tether.post("/api/oauth/start", Map.of("client", "protected-api", "clientOwner", "user", "owner", "user",
                    "name", "main", "integration", "protected", "template", "oauth"));
            assertThat(started.status()).as(started.toString()).isEqualTo(200);
            URI back = URI.create(browser.location(URI.create(started.json().path("authorizationUrl").asString())));
            assertThat(browser.get(URI.create("http://127.0.0.1:" + port + "/api/oauth/callback?" + back.getRawQuery())).body())
                    .contains("\"ok\":true");

            String me = "return await tools.protected.user.main.profile.me({})";
            JsonNode answer = execute(tether, me);
            assertThat(answer.path("ok").asBoolean()).as(answer.toString()).isTrue();
            assertThat(answer.at("/data/active").asBoolean()).isTrue();
            assertThat(api.presented()).singleElement().satisfies(header -> assertThat(header).startsWith("Bearer "));

            int refreshes = oauth.proxy().refreshes();
            api.refuseNext(1);
            JsonNode renewed = execute(tether, me);
            assertThat(renewed.path("ok").asBoolean()).as(renewed.toString()).isTrue();
            assertThat(oauth.proxy().refreshes()).as("a token refused before its expiry is renewed once").isEqualTo(refreshes + 1);
            assertThat(api.presented()).as("the call is made once more").hasSize(3);

            api.refuseNext(5);
            JsonNode refused = execute(tether, me);
            assertThat(refused.at("/error/code").asString()).as(refused.toString()).isEqualTo("connection_rejected");
            assertThat(refused.at("/error/status").asInt()).isEqualTo(401);
            assertThat(oauth.proxy().refreshes()).as("one renewal per refused call").isEqualTo(refreshes + 2);
            assertThat(api.presented()).as("and one retry, no more").hasSize(5);
        }
    }

    private static JsonNode execute(ApiClient tether, String code) {
        Reply reply = tether.post("/api/executions", Map.of("code", code));
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        return reply.json().at("/structured/result");
    }
}
