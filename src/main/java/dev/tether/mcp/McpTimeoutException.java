package dev.tether.mcp;

import java.time.Duration;
import java.util.Optional;

/** An MCP operation outlived its bound. */
public final class McpTimeoutException extends McpServerException {

    McpTimeoutException(String server, String operation, Duration timeout) {
        super(server, "MCP " + operation + " timed out after " + timeout.toMillis() + "ms", Optional.empty());
    }
}
