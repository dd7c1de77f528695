package dev.tether.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.testsupport.Fixture;

/**
 * Executor 1.5.9's published OpenAPI document ({@code ../shared/reference/executor-1.5.9-openapi.json}, beside the
 * project) and a JSON-schema validator (networknt, draft 2020-12 as OpenAPI 3.1 uses) for the response schemas in it.
 * A response schema is addressed inside the whole document by a JSON pointer, so its
 * {@code #/components/schemas/...} references resolve against the document itself.
 */
final class ExecutorOpenApi {

    /** Where the document's schemas are registered; never fetched, the registry maps it to the file's text. */
    private static final String DOCUMENT_IRI = "https://executor.invalid/executor-1.5.9-openapi.json";

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final JsonNode document;
    private final SchemaRegistry registry;
    private final Map<String, Schema> schemas = new ConcurrentHashMap<>();

    private ExecutorOpenApi(String text) {
        this.document = JSON.readTree(text);
        this.registry = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12,
                builder -> builder.schemas(Map.of(DOCUMENT_IRI, text)));
    }

    static ExecutorOpenApi load() {
        Path file = Fixture.projectRoot().resolve("../shared/reference/executor-1.5.9-openapi.json").normalize();
        if (!Files.isRegularFile(file)) {
            fail("Executor's OpenAPI document is missing at " + file + " (shared/ must lie beside the project)");
        }
        try {
            return new ExecutorOpenApi(Files.readString(file));
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** Whether 1.5.9 has this route, e.g. {@code ("get", "/tools/schema")}; paths as the document writes them, without {@code /api}. */
    boolean has(String method, String route) {
        return document.path("paths").path(route).has(method.toLowerCase(Locale.ROOT));
    }

    /** Whether 1.5.9's document defines an error with this {@code _tag} among its components. */
    boolean definesError(String tag) {
        return document.path("components").path("schemas").has(tag);
    }

    /** Asserts that {@code body} is the error {@code tag} as 1.5.9's components define it. */
    void assertConformsToError(String tag, JsonNode body) {
        String pointer = "/components/schemas/" + escape(tag);
        Schema schema = schemas.computeIfAbsent(pointer, p -> registry.getSchema(SchemaLocation.of(DOCUMENT_IRI + "#" + p)));
        assertThat(schema.validate(body)).as("%s must match Executor 1.5.9's %s; body: %s", tag, tag, body).isEmpty();
    }

    /** Whether 1.5.9 declares a JSON answer with {@code status} on this route. */
    boolean declares(String method, String route, int status) {
        return !document.path("paths").path(route).path(method.toLowerCase(Locale.ROOT)).path("responses")
                .path(Integer.toString(status)).path("content").path("application/json").path("schema").isMissingNode();
    }

    /** The violations of the schema that 1.5.9 declares for this route and status; fails when it declares none. */
    List<Error> violations(String method, String route, int status, JsonNode body) {
        return schema(method, route, status).validate(body);
    }

    /** Asserts that {@code body} is what 1.5.9 may answer on this route with this status. */
    void assertConforms(String method, String route, int status, JsonNode body) {
        List<Error> errors = violations(method, route, status, body);
        assertThat(errors)
                .as("%s %s -> %d must match Executor 1.5.9's schema; body: %s", method.toUpperCase(Locale.ROOT), route, status, body)
                .isEmpty();
    }

    private Schema schema(String method, String route, int status) {
        String verb = method.toLowerCase(Locale.ROOT);
        JsonNode operation = document.path("paths").path(route).path(verb);
        if (operation.isMissingNode()) {
            fail("Executor 1.5.9 has no route " + verb.toUpperCase(Locale.ROOT) + " " + route);
        }
        JsonNode response = operation.path("responses").path(Integer.toString(status));
        if (response.path("content").path("application/json").path("schema").isMissingNode()) {
            fail("Executor 1.5.9 declares no JSON response with status " + status + " for " + verb.toUpperCase(Locale.ROOT)
                    + " " + route + "; it declares " + operation.path("responses").propertyNames());
        }
        String pointer = "/paths/" + escape(route) + "/" + verb + "/responses/" + status + "/content/application~1json/schema";
        return schemas.computeIfAbsent(pointer, p -> registry.getSchema(SchemaLocation.of(DOCUMENT_IRI + "#" + p)));
    }

    /** A JSON-pointer token: {@code ~} and {@code /} escaped. */
    private static String escape(String token) {
        return token.replace("~", "~0").replace("/", "~1");
    }
}
