package dev.tether.session;

/** An integration whose tools are HTTP requests (OpenAPI, GraphQL): it has no MCP server to open a session with. */
public final class NotAnMcpServerException extends RuntimeException {

    public NotAnMcpServerException(String slug, String kind) {
        super("integration " + slug + " is a " + kind + " source: its tools are HTTP requests, it has no MCP server to check");
    }
}
