package dev.tether.calls.builtin;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * The TypeScript shapes of JSON schemas, against what a running Executor 1.5.9 daemon answered for the same schemas
 * ({@code GET /api/tools/schema}, recorded in {@code executor-1.5.9-tool-schemas.jsonl} and
 * {@code executor-1.5.9-everything-schemas.jsonl}): its built-ins' input and output shapes, and server-everything's
 * inputs and outputs (an MCP {@code CallToolResult} with the tool's structured content), parentheses included.
 */
class TypeScriptShapesTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    static Stream<Arguments> recorded() throws IOException {
        List<Arguments> cases = new ArrayList<>();
        for (String recording : List.of("executor-1.5.9-tool-schemas.jsonl", "/dev/tether/calls/executor-1.5.9-everything-schemas.jsonl")) {
        try (InputStream in = TypeScriptShapesTest.class.getResourceAsStream(recording)) {
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (line.isBlank()) {
                    continue;
                }
                Map<String, Object> answer = JSON.readValue(line, new TypeReference<>() { });
                for (String side : List.of("input", "output")) {
                    if (answer.get(side + "Schema") instanceof Map<?, ?> && answer.get(side + "TypeScript") instanceof String shape) {
                        cases.add(Arguments.of(answer.get("address") + " " + side, answer.get(side + "Schema"), shape));
                    }
                }
            }
        }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("recorded")
    @SuppressWarnings("unchecked")
    void rendersAsExecutorDoes(String what, Object schema, String expected) {
        assertThat(TypeScriptShapes.of((Map<String, Object>) schema)).isEqualTo(expected);
    }

    @Test
    void whatTypeScriptCannotSayIsUnknown() {
        assertThat(TypeScriptShapes.of(null)).isNull();
        assertThat(TypeScriptShapes.of(Map.of())).isEqualTo("unknown");
        assertThat(TypeScriptShapes.of(Map.of("$ref", "#/definitions/x"))).isEqualTo("unknown");
        assertThat(TypeScriptShapes.of(Map.of("type", "array", "items", Map.of("anyOf", List.of(Map.of("type", "string"),
                Map.of("type", "number")))))).isEqualTo("(string | number)[]");
        assertThat(TypeScriptShapes.of(Map.of("type", "object", "properties", Map.of("a-b", Map.of("type", "integer")),
                "required", List.of("a-b")))).isEqualTo("{ \"a-b\": number; }");
    }
}
