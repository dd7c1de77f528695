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

    /** Quotes the child's last words with every value Tether gave the child taken out. */
    static McpServerException exited(String server, Optional<Integer> exitCode, String stderrTail, Redaction redaction) {
        String code = exitCode.map(c -> "exited with code " + c).orElse("closed its stdout");
        String tail = stderrTail.isBlank() ? "" : ": " + redaction.apply(stderrTail);
        return new McpServerException(server, "MCP server '" + server + "' " + code + tail, exitCode);
    }

    /**
     * A failure described by {@code message}, with Tether's values for this server taken out; the cause is kept
     * only when nothing in its chain quotes one of them, since a logged cause would repeat it.
     */
    static McpServerException redacted(String server, String message, Throwable cause, Redaction redaction) {
        for (Throwable e = cause; e != null; e = e.getCause() == e ? null : e.getCause()) {
            if (redaction.changes(e.getMessage()) || redaction.changes(e.toString())) {
                return new McpServerException(server, redaction.apply(message), Optional.empty());
            }
        }
        return new McpServerException(server, redaction.apply(message), cause);
    }

    static McpServerException notJson(String server, String rawLine, Redaction redaction) {
        String line = redaction.apply(rawLine);
        String shown = line.length() > 200 ? line.substring(0, 200) + "…" : line;
        return new McpServerException(server,
                "MCP server '" + server + "' wrote something other than JSON-RPC on stdout: " + shown, Optional.empty());
    }
}
