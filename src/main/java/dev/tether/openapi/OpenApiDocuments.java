package dev.tether.openapi;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.swagger.parser.OpenAPIParser;
import io.swagger.v3.core.util.Json;
import io.swagger.v3.core.util.Json31;
import io.swagger.v3.core.util.Yaml;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.parser.core.models.ParseOptions;
import io.swagger.v3.parser.core.models.SwaggerParseResult;
import org.jspecify.annotations.Nullable;

/**
 * Reads specs with swagger-parser: OpenAPI 3.0 and 3.1, and Swagger 2.0 converted to OpenAPI 3. A spec never makes
 * Tether read anything else: before the parser sees it, every {@code $ref} is checked to point inside the document
 * ({@code #/...}); one that names a file or an address is refused, so the parser's resolver, which would fetch it,
 * never runs on it. Internal references are kept as references and followed by {@link OpenApiExtraction}.
 */
final class OpenApiDocuments {

    private static final TypeReference<Map<String, Object>> MAP = new TypeReference<>() { };
    private static final int MAX_REFS_REPORTED = 3;

    private OpenApiDocuments() {
    }

    /** The document as a JSON tree in OpenAPI 3 form; fails with {@link OpenApiParseException}. */
    static Map<String, Object> parse(String text, int maxBytes) {
        checkSize(text, maxBytes);
        if (text.isBlank()) {
            throw new OpenApiParseException("The spec is empty");
        }
        JsonNode tree = tree(text);
        if (!tree.isObject() || !(tree.has("openapi") || tree.has("swagger"))) {
            throw new OpenApiParseException("Not an OpenAPI document: it has neither an `openapi` nor a `swagger` field");
        }
        List<String> external = new ArrayList<>();
        externalRefs(tree, "#", external);
        if (!external.isEmpty()) {
            throw new OpenApiParseException("The spec refers outside itself (" + String.join(", ", external.subList(0,
                    Math.min(MAX_REFS_REPORTED, external.size()))) + (external.size() > MAX_REFS_REPORTED ? ", …" : "")
                    + "): Tether resolves only references inside the document (#/...) and never fetches files or addresses a spec names");
        }
        ParseOptions options = new ParseOptions();
        options.setResolve(false);
        options.setResolveFully(false);
        options.setValidateExternalRefs(false);
        SwaggerParseResult result;
        try {
            result = new OpenAPIParser().readContents(text, null, options);
        }
        catch (RuntimeException failed) {
            throw new OpenApiParseException("The spec could not be parsed: " + failed.getMessage(), failed);
        }
        OpenAPI api = result == null ? null : result.getOpenAPI();
        if (api == null) {
            List<String> messages = result == null || result.getMessages() == null ? List.of() : result.getMessages();
            throw new OpenApiParseException("The spec could not be parsed" + (messages.isEmpty() ? "" : ": " + String.join("; ",
                    messages.subList(0, Math.min(MAX_REFS_REPORTED, messages.size())))));
        }
        ObjectMapper mapper = api.getOpenapi() != null && api.getOpenapi().startsWith("3.1") ? Json31.mapper() : Json.mapper();
        Map<String, Object> document = mapper.convertValue(api, MAP);
        if (tree.has("openapi") && !tree.has("servers")) {
            // swagger-parser gives a document without servers the spec's implied server "/"; Executor lists none.
            document.remove("servers");
        }
        return document;
    }

    /** Fails with {@link OpenApiParseException} when the text is over {@code maxBytes}. */
    static void checkSize(String text, int maxBytes) {
        int bytes = text.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > maxBytes) {
            throw new OpenApiParseException("The spec is " + bytes + " bytes, more than the " + maxBytes
                    + " bytes Tether reads (tether.http.max-document-size)");
        }
    }

    private static JsonNode tree(String text) {
        String trimmed = text.stripLeading();
        try {
            return trimmed.startsWith("{") ? Json.mapper().readTree(text) : Yaml.mapper().readTree(text);
        }
        catch (Exception unreadable) {
            throw new OpenApiParseException("The spec is neither JSON nor YAML: " + firstLine(unreadable.getMessage()), unreadable);
        }
    }

    private static void externalRefs(JsonNode node, String at, List<String> found) {
        if (node.isObject()) {
            JsonNode ref = node.get("$ref");
            if (ref != null && ref.isTextual() && !ref.asText().startsWith("#")) {
                found.add(at + "/$ref = " + ref.asText());
            }
            node.properties().forEach(entry -> externalRefs(entry.getValue(), at + "/" + entry.getKey(), found));
        }
        else if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                externalRefs(node.get(i), at + "/" + i, found);
            }
        }
    }

    private static String firstLine(@Nullable String message) {
        if (message == null) {
            return "unreadable";
        }
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }
}
