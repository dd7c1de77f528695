package dev.tether.mcp;

/** An MCP server to open sessions with: a stdio child or a remote endpoint. */
public sealed interface McpServer permits StdioServer, RemoteServer {

    /** Its name, used in errors and logs. */
    String name();
}
