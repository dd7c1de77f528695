package dev.tether.mcp;

import java.util.Optional;

/**
 * An MCP server failed a session: it exited, broke the protocol, or did not answer in time. The message
 * names the server and quotes what it said on stderr, so a health verdict can show it as it is.
 */
public class McpServerException extends RuntimeException {

    private final String server;
    private final Optional<Integer> exitCode;

    McpServerException(String server, String message, Optional<Integer> exitCode) {
        super(message);
        this.server = server;
        this.exitCode = exitCode;
    }

    McpServerException(String server, String message, Throwable cause) {
        super(message, cause);
        this.server = server;
        this.exitCode = Optional.empty();
    }

    public String server() {
        return server;
    }

    public Optional<Integer> exitCode() {
        return exitCode;
    }

    static McpServerException exited(String server, Optional<Integer> exitCode, String stderrTail) {
        String code = exitCode.map(c -> "exited with code " + c).orElse("closed its stdout");
        String tail = stderrTail.isBlank() ? "" : ": " + stderrTail;
        return new McpServerException(server, "MCP server '" + server + "' " + code + tail, exitCode);
    }

    static McpServerException notJson(String server, String line) {
        String shown = line.length() > 200 ? line.substring(0, 200) + "…" : line;
        return new McpServerException(server,
                "MCP server '" + server + "' wrote something other than JSON-RPC on stdout: " + shown, Optional.empty());
    }
}
