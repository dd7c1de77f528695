package dev.tether.mcp;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.json.JsonFactory;

/**
 * What a line of a server's stdout is, read through once without building anything: a JSON-RPC response's string
 * {@code id}, and where its {@code result} (with the result's {@code isError}) or its {@code error} lies in the line.
 * A tool call's answer is forwarded from those positions instead of being read into maps and objects and written again.
 *
 * @param id          the response's id when it is a string; null for a number, none, or not a response
 * @param valueStart  where the {@code result} or {@code error} object starts in the line; -1 when neither is an object
 * @param valueEnd    where it ends (exclusive)
 * @param failed      whether it is an {@code error} (else a {@code result})
 * @param toolError   whether the result says {@code "isError": true}
 */
record ResponseScan(@Nullable String id, int valueStart, int valueEnd, boolean failed, boolean toolError) {

    private static final JsonFactory JSON = new JsonFactory();

    /** The line read as a response; null when it is not JSON, not an object, or has a {@code method} (a request or notification). */
    static @Nullable ResponseScan of(String line) {
        try (JsonParser parser = JSON.createParser(ObjectReadContext.empty(), line)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            String id = null;
            int start = -1;
            int end = -1;
            boolean failed = false;
            boolean toolError = false;
            JsonToken token;
            while ((token = parser.nextToken()) == JsonToken.PROPERTY_NAME) {
                String name = parser.currentName();
                JsonToken value = parser.nextToken();
                switch (name) {
                    case "method" -> {
                        return null;
                    }
                    case "id" -> {
                        id = value == JsonToken.VALUE_STRING ? parser.getString() : null;
                        parser.skipChildren();
                    }
                    case "result", "error" -> {
                        if (value != JsonToken.START_OBJECT) {
                            parser.skipChildren();
                            start = -1;
                            continue;
                        }
                        failed = name.equals("error");
                        start = (int) parser.currentTokenLocation().getCharOffset();
                        while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
                            String field = parser.currentName();
                            JsonToken inner = parser.nextToken();
                            if (!failed && field.equals("isError")) {
                                toolError = inner == JsonToken.VALUE_TRUE;
                            }
                            parser.skipChildren();
                        }
                        end = (int) parser.currentLocation().getCharOffset();
                    }
                    default -> parser.skipChildren();
                }
            }
            if (token != JsonToken.END_OBJECT || parser.nextToken() != null) {
                return null;
            }
            return new ResponseScan(id, start, start < 0 ? -1 : end, failed, toolError);
        } catch (RuntimeException notJson) { // Jackson 3 fails unchecked
            return null;
        }
    }
}
