package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;

import dev.tether.api.TetherClient.Reply;
import dev.tether.testsupport.Fixture;

/**
 * A server's questions ({@code elicitation/create}) during a call of an execution, against the running daemon with
 * server-everything as a real child behind it: the execution pauses with Executor's answer (the requested schema, or
 * the URL), the resume's answer reaches the server, whose call goes on; bad answers are refused and lose nothing.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "tether.docker.reap-interval=1h")
@DirtiesContext
@InProcess
class ElicitationTest {

    private static final Path DATA_DIR = DataDirs.create("elicitation");
    private static ExecutorOpenApi executor;
    private static final String FORM = "return await tools.everything.org.default.trigger_elicitation_request({})";

    @DynamicPropertySource
    static void dataDir(DynamicPropertyRegistry registry) {
        registry.add("tether.data-dir", DATA_DIR::toString);
    }

    @LocalServerPort
    int port;

    private TetherClient tether;

    @BeforeAll
    static void schemas() {
        executor = ExecutorOpenApi.load();
    }

    @AfterAll
    static void removeDataDir() {
        DataDirs.delete(DATA_DIR);
    }

    @BeforeEach
    void connect() {
        tether = new TetherClient(port, DataDirs.token(DATA_DIR));
        if (tether.get("/api/integrations/everything").status() == 404) {
            tether.registerAndSync("everything", Fixture.everythingCommand());
        }
    }

    @Test
    void formQuestionPausesTheExecutionAndTheAcceptedContentReachesTheServer() {
        JsonNode paused = execute(FORM);
        assertThat(paused.path("status").asString()).isEqualTo("paused");
        JsonNode interaction = paused.at("/structured/interaction");
        String id = paused.at("/structured/executionId").asString();
        assertThat(interaction.path("kind").asString()).isEqualTo("form");
        assertThat(interaction.path("message").asString()).isEqualTo("Please provide inputs for the following fields:");
        assertThat(interaction.path("address").asString()).isEqualTo("tools.everything.org.default.trigger_elicitation_request");
        assertThat(interaction.at("/requestedSchema/required/0").asString()).isEqualTo("name");
        assertThat(paused.path("text").asString()).startsWith("Execution paused: Please provide inputs for the following fields:\n\n"
                + "Ask the user for a response matching the requested schema, then call the resume tool.\n\nRequested schema:\n{\n"
                + "  \"type\": \"object\",\n  \"properties\": {\n    \"name\": {\n      \"title\": \"String\",");
        assertThat(paused.path("text").asString()).contains("\nexecutionId: " + id + "\n\ninstructions: Ask the user for values");
        assertThat(tether.get("/api/executions/" + id).json().path("text").asString()).isEqualTo(paused.path("text").asString());

        Reply wrong = tether.post("/api/executions/" + id + "/resume", Map.of("action", "accept", "content", Map.of("name", 7)));
        assertThat(wrong.status()).as(wrong.toString()).isEqualTo(400);
        assertThat(wrong.json().path("_tag").asString()).isEqualTo("HttpApiDecodeError");
        assertThat(wrong.json().path("message").asString()).startsWith("`content` does not match the requested schema: ");
        Reply missing = tether.post("/api/executions/" + id + "/resume", Map.of("action", "accept"));
        assertThat(missing.status()).as("a required field is missing: " + missing).isEqualTo(400);
        assertThat(tether.get("/api/executions/" + id).status()).as("still paused after bad content").isEqualTo(200);

        JsonNode done = resume(id, Map.of("action", "accept", "content", Map.of("name", "Ada", "check", true)));
        assertThat(done.path("status").asString()).as(done.toString()).isEqualTo("completed");
        String answer = done.at("/structured/result/data/content/1/text").asString();
        assertThat(answer).contains("- Name: Ada").contains("- Agreed to terms: true");
        assertThat(tether.post("/api/executions/" + id + "/resume", Map.of("action", "accept")).status())
                .as("a finished execution").isEqualTo(404);
    }

    @Test
    void declinedOrCancelledQuestionIsTheServersToAnswer() {
        for (String action : new String[] {"decline", "cancel"}) {
            JsonNode paused = execute(FORM);
            JsonNode done = resume(paused.at("/structured/executionId").asString(), Map.of("action", action));
            assertThat(done.at("/structured/result/ok").asBoolean()).isTrue();
            assertThat(done.at("/structured/result/data/content/0/text").asString())
                    .isEqualTo(action.equals("decline") ? "❌ User declined to provide the requested information."
                            : "⚠️ User cancelled the elicitation dialog.");
        }
    }

    @Test
    void urlQuestionPausesWithTheUrlAndAnythingButHttpIsRefused() {
        JsonNode paused = execute("return await tools.everything.org.default.trigger_url_elicitation({url: 'https://example.com/login'})");
        JsonNode interaction = paused.at("/structured/interaction");
        assertThat(interaction.path("kind").asString()).isEqualTo("url");
        assertThat(interaction.path("url").asString()).isEqualTo("https://example.com/login");
        assertThat(interaction.has("requestedSchema")).isFalse();
        assertThat(paused.path("text").asString()).startsWith("Execution paused: Please open the link to complete this action.\n\n"
                + "Open this URL in a browser:\nhttps://example.com/login\n\nAfter the browser flow, call the resume tool with action \"accept\".");
        JsonNode done = resume(paused.at("/structured/executionId").asString(), Map.of("action", "accept", "content", Map.of()));
        assertThat(done.at("/structured/result/data/content/0/text").asString()).startsWith("✅ User completed the URL elicitation flow.");

        JsonNode refused = execute("return await tools.everything.org.default.trigger_url_elicitation({url: 'file:///etc/passwd'})");
        assertThat(refused.path("status").asString()).as("no pause for a file: URL").isEqualTo("completed");
        assertThat(refused.path("text").asString()).contains("must be http or https, was file");
    }

    @Test
    void plainCallOutsideAnExecutionIsAcceptedAsExecutorDoes() {
        Reply called = tether.post("/api/tools/call", Map.of("address", "tools.everything.org.default.trigger_elicitation_request",
                "args", Map.of()));
        assertThat(called.status()).as(called.toString()).isEqualTo(200);
        assertThat(called.json().at("/content/0/text").asString()).contains("\"action\": \"accept\"");
    }

    private JsonNode execute(String code) {
        Reply reply = tether.post("/api/executions", Map.of("code", code));
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        executor.assertConforms("post", "/executions", 200, reply.json());
        return reply.json();
    }

    private JsonNode resume(String id, Map<String, Object> body) {
        Reply reply = tether.post("/api/executions/" + id + "/resume", body);
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        executor.assertConforms("post", "/executions/{executionId}/resume", 200, reply.json());
        return reply.json();
    }
}
