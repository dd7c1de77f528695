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
 * ({@code GET /api/tools/schema}, recorded in {@code executor-1.5.9-tool-schemas.jsonl}): its built-ins' input and
 * output shapes and some of server-everything's inputs. One difference is known and left out: inside a union member
 * of an array's items Executor puts a nested union in parentheses ({@code slug?: (string | null)}); Tether does not,
 * which is the same TypeScript type.
 */
class TypeScriptShapesTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    static Stream<Arguments> recorded() throws IOException {
        List<Arguments> cases = new ArrayList<>();
        try (InputStream in = TypeScriptShapesTest.class.getResourceAsStream("executor-1.5.9-tool-schemas.jsonl")) {
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (line.isBlank()) {
                    continue;
                }
                Map<String, Object> answer = JSON.readValue(line, new TypeReference<>() { });
                for (String side : List.of("input", "output")) {
                    if (answer.get(side + "Schema") instanceof Map<?, ?> && answer.get(side + "TypeScript") instanceof String shape
                            && !shape.contains("?: (string | null)")) {
                        cases.add(Arguments.of(answer.get("address") + " " + side, answer.get(side + "Schema"), shape));
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
