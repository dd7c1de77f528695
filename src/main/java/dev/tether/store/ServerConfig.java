package dev.tether.store;

/** How an integration reaches its tools: an MCP server as a stdio child or a remote endpoint, or HTTP requests described by a document. */
public sealed interface ServerConfig permits StdioConfig, RemoteConfig, HttpSourceConfig {

    /** Executor's name of the transport: {@code stdio} or {@code remote}. */
    String transport();
}
