package dev.tether.mcp;

import java.io.IOException;
import java.io.UncheckedIOException;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import org.jspecify.annotations.Nullable;

/**
 * A tool's answer, a {@code CallToolResult}: as a stdio server wrote it (its JSON, untouched), or as one made here (a
 * built-in's, an HTTP source's, a failure's, a remote server's through the SDK). Whoever passes it on to an agent passes
 * the JSON as it came; whoever reads it reads it into a {@link CallToolResult} once, on first use. What a server sent
 * reaches the agent as it was sent, fields the SDK does not know included, as a gateway should forward it.
 */
public final class ToolAnswer {

    private static final McpJsonMapper JSON = McpJsonDefaults.getMapper();

    private final boolean error;
    // Made at most once each; a race makes equal values twice, which is harmless.
    private @Nullable String json;
    private @Nullable CallToolResult result;

    private ToolAnswer(@Nullable String json, @Nullable CallToolResult result, boolean error) {
        this.json = json;
        this.result = result;
        this.error = error;
    }

    /** An answer made here. */
    public static ToolAnswer of(CallToolResult result) {
        return new ToolAnswer(null, result, Boolean.TRUE.equals(result.isError()));
    }

    /** An answer as a server sent it: {@code json} is one JSON object, {@code error} its {@code isError}. */
    static ToolAnswer sent(String json, boolean error) {
        return new ToolAnswer(json, null, error);
    }

    /** Whether the tool said it failed ({@code isError: true}). */
    public boolean isError() {
        return error;
    }

    /** The answer read into the SDK's type, on first use; fails when the server's JSON is no {@code CallToolResult}. */
    public CallToolResult result() {
        CallToolResult read = result;
        if (read == null) {
            try {
                read = JSON.readValue(json(), CallToolResult.class);
            } catch (IOException unreadable) {
                throw new UncheckedIOException("the tool's answer is not a CallToolResult: " + unreadable.getMessage(), unreadable);
            }
            result = read;
        }
        return read;
    }

    /** The answer as JSON: as the server sent it, or written on first use. */
    public String json() {
        String written = json;
        if (written == null) {
            try {
                written = JSON.writeValueAsString(result);
            } catch (IOException unwritable) {
                throw new UncheckedIOException(unwritable);
            }
            json = written;
        }
        return written;
    }

    @Override
    public String toString() {
        return json();
    }
}
