package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpMethod;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.tether.api.TetherClient.Reply;
import dev.tether.testsupport.Fixture;
import dev.tether.testsupport.OsProcesses;

/**
 * {@code GET /api/tools} keeps its encoded answer between requests; these show that a kept answer is never served
 * after what it was made of changed: each listing below is asked for twice before the change (so that one is kept)
 * and once right after it. Real fixture servers, registered and synced over HTTP.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "tether.api.token=" + ToolsListingTest.TOKEN, "tether.docker.reap-interval=1h" })
@DirtiesContext
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ToolsListingTest {

    static final String TOKEN = "listing-test-token";
    private static final String RUN = UUID.randomUUID().toString().substring(0, 12);
    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final List<String> SLUGS = List.of("synced", "removed", "blocked");
    private static final List<String> LISTINGS = List.of("/api/tools", "/api/tools?includeAnnotations=true", "/api/tools?query=tool_",
            "/api/tools?integration=");

    private static final Path DATA_DIR = DataDirs.create("listing");

    @LocalServerPort
    int port;

    private TetherClient api;

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", DATA_DIR::toString);
    }

    @BeforeAll
    void registerAndSync() {
        api = new TetherClient(port, TOKEN);
        SLUGS.forEach(slug -> api.registerAndSync(slug, Fixture.command("--run=" + RUN, "--tools=2")));
    }

    @AfterAll
    void removeServers() {
        try {
            SLUGS.forEach(slug -> api.delete("/api/integrations/" + slug));
            OsProcesses.awaitNoneMatching("--run=" + RUN, BOUND);
        }
        finally {
            OsProcesses.matching("--run=" + RUN).forEach(ProcessHandle::destroyForcibly);
        }
    }

    @Test
    void aNewlySyncedCatalogIsListedAtOnce() {
        String added = "tools.synced.org.default.tool_3";
        listedTwice("synced").forEach(listing -> assertThat(listing).doesNotContain(added));

        assertThat(api.post("/api/mcp/servers/synced/config", Map.of("config", config("--tools=3"))).status()).isEqualTo(200);
        assertThat(api.post("/api/connections/org/synced/default/refresh", null).json().valueStream().map(tool -> tool.path("address").asString()))
                .contains(added);

        listed("synced").forEach(listing -> assertThat(listing).contains(added));
    }

    @Test
    void aDeletedConnectionIsNoLongerListed() {
        String gone = "tools.removed.org.default.tool_1";
        listedTwice("removed").forEach(listing -> assertThat(listing).contains(gone));

        assertThat(api.delete("/api/connections/org/removed/default").status()).isEqualTo(200);

        listed("removed").forEach(listing -> assertThat(listing).noneMatch(address -> address.startsWith("tools.removed.")));
    }

    @Test
    void aNewBlockingPolicyHidesItsToolsAtOnceUnlessBlockedOnesAreAskedFor() {
        String blocked = "tools.blocked.org.default.tool_2";
        listedTwice("blocked").forEach(listing -> assertThat(listing).contains(blocked));
        assertThat(addresses("/api/tools?includeBlocked=true")).contains(blocked);

        Reply policy = api.post("/api/policies", Map.of("owner", "org", "pattern", "blocked.org.default.tool_2", "action", "block"));
        assertThat(policy.status()).as(policy.toString()).isEqualTo(200);

        listed("blocked").forEach(listing -> assertThat(listing).doesNotContain(blocked).contains("tools.blocked.org.default.tool_1"));
        assertThat(addresses("/api/tools?includeBlocked=true")).contains(blocked);

        String id = policy.json().path("id").asString();
        assertThat(api.call(HttpMethod.DELETE, "/api/policies/" + id, Map.of("owner", "org")).status()).isEqualTo(200);
        listed("blocked").forEach(listing -> assertThat(listing).contains(blocked));
    }

    /** Each listing's addresses, asked for twice so that the second answer is the kept one. */
    private List<List<String>> listedTwice(String slug) {
        listed(slug);
        List<List<String>> kept = listed(slug);
        assertThat(kept).allSatisfy(listing -> assertThat(listing).isNotEmpty());
        return kept;
    }

    private List<List<String>> listed(String slug) {
        return LISTINGS.stream().map(path -> path.endsWith("=") ? path + slug : path).map(this::addresses).toList();
    }

    private List<String> addresses(String path) {
        Reply reply = api.get(path);
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        return reply.json().valueStream().map(tool -> tool.path("address").asString()).toList();
    }

    /** A fixture server with the given {@code --tools=N}. */
    private static Map<String, Object> config(String tools) {
        List<String> command = Fixture.command("--run=" + RUN, tools);
        return Map.of("transport", "stdio", "command", command.get(0), "args", new ArrayList<>(command.subList(1, command.size())));
    }
}
